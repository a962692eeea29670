using System.IO.Pipelines;
using System.Net.Sockets;
using Tunnel2.Protocol.Http1;

namespace Tunnel2.TunnelServer.Uplinks.Handshake;

/// <summary>
/// Reads the upgrade request's head within the handshake timeout, and says what a failure to read it means: a head too
/// large (431), malformed (400) or late (408) is refused; a client gone or a server stopping ends the connection quietly.
/// </summary>
/// <param name="timeout">How long the head, and the answer to it, may take (TunnelServer:Limits:HandshakeTimeout).</param>
public sealed class HandshakeReader(TimeSpan timeout)
{
    /// <summary>The longest upgrade request taken, as Kestrel's default limit on request headers.</summary>
    public const int MaxHeadBytes = 32 * 1024;

    /// <summary>The handshake's deadline: cancelled when the timeout passes or the server stops.</summary>
    public CancellationTokenSource StartDeadline(CancellationToken stopping)
    {
        var deadline = CancellationTokenSource.CreateLinkedTokenSource(stopping);
        deadline.CancelAfter(timeout);
        return deadline;
    }

    /// <param name="deadline">From <see cref="StartDeadline"/>.</param>
    /// <param name="stopping">Cancelled when the server stops (a cancellation then is no timeout).</param>
    public async Task<HeadRead> ReadAsync(PipeReader input, CancellationToken deadline, CancellationToken stopping)
    {
        try
        {
            return new HeadRead(await Http1Head.ReadAsync(input, MaxHeadBytes, deadline), null, null);
        }
        catch (Exception ex) when (IsHandshakeFailure(ex))
        {
            return Failed(ex, stopping);
        }
    }

    /// <summary>Whether <paramref name="ex"/> is one <see cref="Failed"/> knows; others are faults, not the client's doing.</summary>
    public static bool IsHandshakeFailure(Exception ex) =>
        ex is Http1HeadTooLargeException or InvalidDataException or OperationCanceledException or IOException or SocketException;

    /// <summary>What a failure while reading the head or writing the answer to it means.</summary>
    public HeadRead Failed(Exception ex, CancellationToken stopping) => ex switch
    {
        Http1HeadTooLargeException => HeadRead.Refused(new HandshakeRefusal(431, "head-too-large", "Request header fields too large",
            $"The upgrade request must fit in {MaxHeadBytes} bytes.")),
        InvalidDataException => HeadRead.Refused(new HandshakeRefusal(400, "bad-request", "Bad request", ex.Message)),
        OperationCanceledException when !stopping.IsCancellationRequested => HeadRead.Refused(new HandshakeRefusal(408, "handshake-timeout",
            "Request timeout", $"The upgrade request did not arrive within {timeout.TotalSeconds:0.###} s.")),
        _ => new HeadRead(null, null, ex.Message), // the client went away, or the server is stopping
    };
}

/// <summary>
/// The upgrade request's head; or the refusal its failure earns; or, with neither, why the connection simply ends
/// (<see cref="Abandoned"/>; null too for a client that connected and closed without a word: a port probe).
/// </summary>
public readonly record struct HeadRead(Http1Head? Head, HandshakeRefusal? Refusal, string? Abandoned)
{
    public static HeadRead Refused(HandshakeRefusal refusal) => new(null, refusal, null);
}
