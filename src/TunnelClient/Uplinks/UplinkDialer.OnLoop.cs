using System.IO.Pipelines;
using System.Net;
using System.Net.Sockets;
using Tunnel2.Loops;
using Tunnel2.Protocol.Handshake;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.TunnelClient.Configuration;

namespace Tunnel2.TunnelClient.Uplinks;

/// <summary>
/// A plain-TCP uplink for the client's event loop (<c>TunnelClient:Uplink:Engine</c> = <c>Loop</c>): the connect and the
/// upgrade handshake run off the loop, on a thread-pool thread with the socket's synchronous calls, so that the socket
/// never joins the runtime's own epoll set (an async call would register it there, edge-triggered, and every segment
/// the loop then reads would wake the runtime's epoll thread too, for nothing). Then the loop adopts the socket.
/// </summary>
public sealed partial class UplinkDialer
{
    /// <summary>The client's loop when plain-TCP uplinks run on it (<c>TunnelClient:Uplink:Engine</c> = <c>Loop</c>, supported
    /// here); null for the runtime's sockets, also when the loop cannot start (logged once).</summary>
    private EventLoop? LoopForUplinks()
    {
        if (_loop is null || _loopUnavailable || _options.Uplink.Engine != ClientUplinkOptions.EngineLoop || !EventLoop.IsSupported)
        {
            return null;
        }

        try
        {
            return _loop.Loop;
        }
        catch (Exception ex) when (ex is DllNotFoundException or EntryPointNotFoundException or InvalidOperationException)
        {
            _loopUnavailable = true;
            UplinkDialerLog.LoopUnavailable(_loggerFactory.CreateLogger<UplinkDialer>(), ex.Message);
            return null;
        }
    }

    private async Task<DialedUplink> LogInOnLoopAsync(EventLoop loop, UplinkTarget target, string instanceId, int slot, CancellationToken cancellationToken)
    {
        using var dial = new BlockingDial(CreateUplinkSocket);
        try
        {
            IPAddress[] addresses = target.Address is { } address ? [address] : await Dns.GetHostAddressesAsync(target.Server.Host, cancellationToken);
            HandshakeResponse response;
            byte[] early;
            using (cancellationToken.Register(static state => ((BlockingDial)state!).Cancel(), dial)) // ends a blocking call at the timeout
            {
                (response, early) = await Task.Run(() => HandshakeBlockingAsync(dial, addresses, target.Server, instanceId, cancellationToken), cancellationToken);
            }

            cancellationToken.ThrowIfCancellationRequested();
            UplinkSettings settings = NegotiatedSettings(name => response[name]);
            string? tcpAddress = TcpAddressOf(settings, response[HandshakeProtocol.TcpAddressHeader], target.Label);
#pragma warning disable CA2000 // the socket goes to the uplink, whose loop closes it
            Uplink uplink = Uplink.OnLoop(loop, dial.Take(), early, settings, _loggerFactory.CreateLogger<Uplink>(), _relay,
                $"{_options.Session}->{target.Label} #{slot}");
#pragma warning restore CA2000
            _loop!.OnUplinkTaken();
            return new DialedUplink(Stream.Null, uplink, publicUrl: response[HandshakeProtocol.PublicUrlHeader]) { TcpAddress = tcpAddress };
        }
        catch (Exception ex) when (cancellationToken.IsCancellationRequested && ex is ObjectDisposedException or SocketException or IOException)
        {
            throw new OperationCanceledException($"The server did not answer within {_options.ConnectTimeout}.", ex, cancellationToken);
        }
    }

    /// <summary>On a thread-pool thread: connect, send the upgrade request, read the answer, all with blocking calls.</summary>
    /// <returns>The answer and what was read past its head (the first frames), for the loop's parser.</returns>
    private async Task<(HandshakeResponse Response, byte[] Early)> HandshakeBlockingAsync(
        BlockingDial dial, IPAddress[] addresses, Uri server, string instanceId, CancellationToken cancellationToken)
    {
        dial.Connect(addresses, server.Port);
        Socket socket = dial.Connected;
        socket.Send(BuildRequest(server, instanceId));
        socket.ReceiveTimeout = (int)Math.Max(1, _options.ConnectTimeout.TotalMilliseconds);
        PipeReader reader = PipeReader.Create(new BlockingSocketStream(socket), new StreamPipeReaderOptions(bufferSize: 4096, leaveOpen: true));
        HandshakeResponse response = Upgraded(await HandshakeResponse.ReadAsync(reader, cancellationToken));
        socket.ReceiveTimeout = 0;
        byte[] early = [];
        if (reader.TryRead(out ReadResult read))
        {
            early = System.Buffers.BuffersExtensions.ToArray(read.Buffer);
            reader.AdvanceTo(read.Buffer.End);
        }

        await reader.CompleteAsync();
        return (response, early);
    }
}
