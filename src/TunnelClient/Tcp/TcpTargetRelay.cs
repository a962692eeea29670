using System.Buffers;
using System.Net.Sockets;
using Microsoft.Extensions.Options;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.Hosting.Sockets;
using Tunnel2.Protocol.Relaying;
using Tunnel2.Protocol.Tcp;
using Tunnel2.TunnelClient.Configuration;

namespace Tunnel2.TunnelClient.Tcp;

/// <summary>
/// Each TCP stream the server opens: dial the target (<c>--tcp</c>), optionally send a PROXY protocol v2 header, then
/// relay bytes both ways under the stream's windows. The server's END_STREAM (the caller's FIN) shuts down the target
/// connection's sending side, and the target's FIN goes up as END_STREAM (half-close both ways). A target that cannot be
/// reached resets the stream with <see cref="ProtocolErrorCode.BackendConnectFailed"/>; one that breaks mid-stream with
/// <see cref="ProtocolErrorCode.BackendAborted"/>; a reset from the server (the caller vanished, the idle timeout) cuts
/// the target connection. Each stream ends with one log line.
/// </summary>
public sealed class TcpTargetRelay : ITcpTargetRelay
{
    private readonly TcpTarget? _target;
    private readonly bool _proxyProtocol;
    private readonly TimeSpan _connectTimeout;
    private readonly int _unsentBytesLimit;
    private readonly ILogger<TcpTargetRelay> _logger;

    public TcpTargetRelay(IOptions<TunnelClientOptions> options, ILogger<TcpTargetRelay> logger)
    {
        TcpClientOptions tcp = options.Value.Tcp;
        _target = TcpTarget.Parse(tcp.Target, out _);
        _proxyProtocol = tcp.ProxyProtocol == TcpClientOptions.ProxyProtocolV2;
        _connectTimeout = tcp.ConnectTimeout;
        _unsentBytesLimit = options.Value.Uplink.UnsentBytesLimit;
        _logger = logger;
    }

    public void OnStreamOpened(IByteStream stream) =>
        ThreadPool.UnsafeQueueUserWorkItem(static state => _ = state.Relay.RelayAsync(state.Stream), (Relay: this, Stream: stream), preferLocal: false);

    private async Task RelayAsync(IByteStream stream)
    {
        TcpStreamOpen open = stream.Tcp!.Value;
        string target = _target!.ToString();
        string reason = "closed by both sides";
        Socket? socket = null;
        try
        {
            (socket, string? broken) = await ConnectAsync(stream);
            if (socket is null)
            {
                return;
            }

            reason = broken ?? await RelayBytesAsync(stream, socket, open);
        }
        catch (Exception ex)
        {
            reason = $"relay failed: {ex.Message}";
            TcpClientLog.RelayCrashed(_logger, stream.Id, ex);
            stream.Reset(ProtocolErrorCode.InternalError);
        }
        finally
        {
            if (socket is not null)
            {
                TcpClientLog.Ended(_logger, stream.Id, open.Caller.ToString(), target, reason, stream.SentBytes, stream.ReceivedBytes);
                socket.Dispose();
            }

            stream.Dispose();
        }
    }

    /// <returns>
    /// The connected target, or null when it could not be reached (the stream is reset and it is logged); with why it
    /// broke when it was reset as it connected (the stream is reset, nothing is relayed).
    /// </returns>
    private async Task<(Socket? Socket, string? Broken)> ConnectAsync(IByteStream stream)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        UnsentBytesLimit.TryApply(socket, _unsentBytesLimit);
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(stream.Aborted);
        timeout.CancelAfter(_connectTimeout);
        try
        {
            await socket.ConnectAsync(_target!.Host, _target.Port, timeout.Token);
            return (socket, null);
        }
        catch (SocketException ex) when (ex.SocketErrorCode == SocketError.ConnectionReset)
        {
            // The target took the connection and reset it before the connect's completion was read (a refused connect
            // says ConnectionRefused): it broke the connection, it was not unreachable. Its reads would now see a plain
            // end, so nothing is relayed.
            stream.Reset(ProtocolErrorCode.BackendAborted);
            return (socket, $"the target broke the connection ({ex.Message})");
        }
        catch (Exception ex) when (ex is SocketException or OperationCanceledException or ArgumentException)
        {
            socket.Dispose();
            string why = stream.IsAborted ? "the caller went away first"
                : ex is OperationCanceledException ? $"no answer within {_connectTimeout}" : ex.Message;
            TcpClientLog.TargetUnreachable(_logger, stream.Id, _target!.ToString(), why);
            stream.Reset(ProtocolErrorCode.BackendConnectFailed);
            return (null, null);
        }
    }

    private async Task<string> RelayBytesAsync(IByteStream stream, Socket socket, TcpStreamOpen open)
    {
        var abort = new SocketAbort(socket);
        stream.SetAbortListener(abort);
        try
        {
            if (_proxyProtocol)
            {
                await SendProxyHeaderAsync(socket, open);
            }

            // The target breaking resets the stream with BackendAborted: the server tells its caller so.
            DuplexRelayResult result = await DuplexRelay.RunAsync(stream, RelayEnd.OfSocket(socket), ProtocolErrorCode.BackendAborted);
            return result.FailedSide is { } side ? Describe(side == RelaySide.Local, result.Error, result.PeerReset) : "closed by both sides";
        }
        finally
        {
            stream.ClearAbortListener();
        }
    }

    /// <summary>The PROXY protocol v2 header, before any of the caller's bytes.</summary>
    private static async Task SendProxyHeaderAsync(Socket socket, TcpStreamOpen open)
    {
        int length = ProxyProtocolV2.LengthOf(open);
        byte[] header = ArrayPool<byte>.Shared.Rent(length);
        try
        {
            int written = ProxyProtocolV2.Write(open, header);
            await socket.SendAsync(header.AsMemory(0, written), SocketFlags.None);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(header);
        }
    }

    /// <summary>Why the relay ended, judged before this side resets the stream: a reset found here came from the server.</summary>
    private static string Describe(bool targetSide, Exception? failure, ProtocolErrorCode? peerReset) =>
        failure is UplinkClosedException ? $"the uplink was lost ({failure.Message})"
        : peerReset is { } code ? $"the server reset the stream ({code}{(code == ProtocolErrorCode.Cancelled ? ": the caller went away" : string.Empty)})"
        : targetSide ? $"the target broke the connection ({failure?.Message ?? "reset"})"
        : $"the target stopped reading ({failure?.Message ?? "reset"})";

    /// <summary>A reset of the stream (from the server, or the uplink's loss) cuts the target connection with a reset.</summary>
    private sealed class SocketAbort(Socket socket) : IStreamAbortListener
    {
        public void OnStreamAborted() => RelayEnd.Reset(socket);
    }
}
