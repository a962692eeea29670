namespace Tunnel2.Protocol.Heads;

/// <summary>One header line. Repeated names (several Set-Cookie) are kept as separate fields, in order.</summary>
public readonly record struct HeaderField(string Name, string Value);
