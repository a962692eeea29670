using Microsoft.Extensions.Options;

namespace Tunnel2.TunnelClient.Configuration;

/// <summary>
/// Checks <see cref="TunnelClientOptions"/>' data annotations with code generated at build time
/// (ValidateDataAnnotations would find them by reflection, which Native AOT does not keep).
/// </summary>
[OptionsValidator]
public sealed partial class TunnelClientOptionsAnnotations : IValidateOptions<TunnelClientOptions>;
