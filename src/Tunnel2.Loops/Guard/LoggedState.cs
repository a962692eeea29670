using System.Collections;
using Microsoft.Extensions.Logging;

namespace Tunnel2.Loops.Guard;

/// <summary>
/// A log state's properties and message as they were when logged, for a line written later (<see cref="LoggedLine"/>).
/// A structured sink reads the same properties, the message template ({OriginalFormat}) among them, as from the state.
/// </summary>
internal sealed class LoggedState : IReadOnlyList<KeyValuePair<string, object?>>
{
    public static readonly Func<LoggedState, Exception?, string> Format = static (state, _) => state._message;

    private readonly KeyValuePair<string, object?>[] _properties;
    private readonly string _message;

    public LoggedState(IEnumerable<KeyValuePair<string, object?>> properties, string message)
    {
        _properties = [.. properties];
        _message = message;
    }

    public int Count => _properties.Length;

    public KeyValuePair<string, object?> this[int index] => _properties[index];

    /// <summary>
    /// States that hold the values they were given, so a later write says the same: those of Microsoft.Extensions.Logging
    /// (LoggerMessage.Define, the LogInformation family), the generated log methods' structs, and text. Any other
    /// (ASP.NET Core hosting's, for one) may read live objects when written, and is copied.
    /// </summary>
    public static bool KeepsItsValues<TState>(TState state) =>
        state is null or string || typeof(TState).IsValueType || state.GetType().Assembly == typeof(LoggerMessage).Assembly;

    public IEnumerator<KeyValuePair<string, object?>> GetEnumerator() => ((IEnumerable<KeyValuePair<string, object?>>)_properties).GetEnumerator();

    IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();

    public override string ToString() => _message;
}
