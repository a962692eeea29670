using System.ComponentModel.DataAnnotations;

namespace Tunnel2.TunnelServer.Configuration;

/// <summary>How the public listener carries its connections (section <c>TunnelServer:Public</c>; docs/protocol.md §9).</summary>
public sealed class ServerPublicOptions
{
    /// <summary>
    /// What carries the plain-HTTP public listener's connections (an http:// public URL; issue 52, stage 4a):
    /// <c>Loop</c> (the default), the server's one event loop, which accepts, reads and sends for Kestrel, which then
    /// parses and answers each request on the loop's thread, beside the uplinks (Linux on x86-64 only; elsewhere Sockets
    /// is used); <c>Sockets</c>, Kestrel's socket transport. An https:// public URL, the h2c and admin listeners always
    /// use Sockets.
    /// </summary>
    [Required(ErrorMessage = "TunnelServer:Public:Transport must be 'Sockets' or 'Loop'.")]
    [RegularExpression("^(Sockets|Loop)$", ErrorMessage = "TunnelServer:Public:Transport must be 'Sockets' or 'Loop'.")]
    public string Transport { get; set; } = TransportLoop;

    public const string TransportSockets = "Sockets";

    public const string TransportLoop = "Loop";

    /// <summary>Whether the plain-HTTP public listener runs on the server's loop: chosen so, and a platform that has one.</summary>
    public bool IsLoop => Transport == TransportLoop && Tunnel2.Loops.EventLoop.IsSupported;
}
