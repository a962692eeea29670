using Microsoft.Extensions.Options;

namespace Tunnel2.ProxyEntry.Configuration;

/// <summary>
/// Checks <see cref="ProxyEntryOptions"/>' data annotations with code generated at build time
/// (ValidateDataAnnotations would find them by reflection, which Native AOT does not keep).
/// </summary>
[OptionsValidator]
public sealed partial class ProxyEntryOptionsAnnotations : IValidateOptions<ProxyEntryOptions>;
