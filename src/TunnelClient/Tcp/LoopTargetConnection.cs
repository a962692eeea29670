using System.Net;
using System.Net.Sockets;
using Tunnel2.Hosting.Sockets;
using Tunnel2.Loops.Scheduling;
using Tunnel2.Loops.Sockets;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.Protocol.Relaying.OnLoop;
using Tunnel2.Protocol.Tcp;

namespace Tunnel2.TunnelClient.Tcp;

/// <summary>
/// One TCP stream and its target connection on <see cref="LoopTargetRelay"/>'s loop. The relay itself (both directions,
/// half-close, resets, the end) is the shared <see cref="LoopStreamConnection"/>, which the server's TCP door uses too;
/// what is the client's own is here: the PROXY v2 header ahead of the caller's bytes, the dial with its timeout, and the
/// log lines. A target that cannot be reached resets the stream with BackendConnectFailed (the server may try another
/// client), one that breaks with BackendAborted.
/// </summary>
internal sealed class LoopTargetConnection : LoopStreamConnection
{
    private readonly LoopTargetRelay _relay;
    private readonly uint _id;
    private readonly string _caller;
    private LoopTimer? _connectTimer;

    /// <summary>On the uplink's reader thread, in OnStreamOpened: the sink and abort listener are set before any frame of the stream.</summary>
    public LoopTargetConnection(LoopTargetRelay relay, IByteStream stream)
        : base(relay.Loop, stream)
    {
        _relay = relay;
        _id = stream.Id;
        TcpStreamOpen open = stream.Tcp!.Value;
        _caller = open.Caller.ToString();
        if (relay.ProxyProtocol)
        {
            // The PROXY v2 header leads the backlog, so it goes before any of the caller's bytes; it is not the stream's.
            Span<byte> header = stackalloc byte[ProxyProtocolV2.LengthOf(open)];
            int length = ProxyProtocolV2.Write(open, header);
            Prepend(header[..length]);
        }

        stream.AttachInboundSink(this);
        _connectTimer = relay.Loop.Schedule(relay.ConnectTimeout, static state => ((LoopTargetConnection)state!).OnConnectTimeout(), this);
        stream.SetAbortListener(this);
    }

    protected override ProtocolErrorCode SocketFailureCode => ProtocolErrorCode.BackendAborted;

    /// <summary>On the loop: dials the target's address (resolved already; no name resolution here).</summary>
    internal void StartConnect(IPEndPoint to)
    {
        if (IsFinished)
        {
            return;
        }

        Socket? socket = new(to.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            socket.NoDelay = true;
            UnsentBytesLimit.TryApply(socket, _relay.UnsentBytesLimit);
            Socket sender = socket;
            socket = null; // the loop socket owns it from here (and disposes it when the connect cannot start)
            LoopSocket? connecting = LoopSocket.Connect(_relay.Loop, sender, to, this, out LoopError error);
            if (connecting is null)
            {
                Unreachable(Describe(error));
                return;
            }

            Attach(connecting, sender, connected: false);
        }
        finally
        {
            socket?.Dispose();
        }
    }

    /// <summary>On the loop, after the name was resolved on the thread pool.</summary>
    internal void OnResolved(Task<IPAddress[]> resolved)
    {
        if (IsFinished)
        {
            return;
        }

        IPEndPoint? to = resolved.IsCompletedSuccessfully ? _relay.PickAddress(resolved.Result) : null;
        if (to is null)
        {
            Unreachable(resolved.Exception?.InnerException?.Message ?? "the name has no address");
            return;
        }

        StartConnect(to);
    }

    public override void OnConnected(LoopSocket socket)
    {
        _connectTimer?.Cancel();
        _connectTimer = null;
        base.OnConnected(socket);
    }

    protected override void OnFailedBeforeConnected(LoopError reason) =>
        Unreachable(reason.Kind == LoopErrorKind.LoopStopped ? "the client is stopping" : Describe(reason));

    protected override void OnAbortedBeforeConnected() => Unreachable("the caller went away first");

    protected override void OnFinishing()
    {
        _connectTimer?.Cancel();
        _connectTimer = null;
    }

    private void OnConnectTimeout()
    {
        _connectTimer = null;
        if (!IsConnected && !IsFinished)
        {
            Unreachable($"no answer within {_relay.ConnectTimeout}");
        }
    }

    /// <summary>The target could not be reached: the server may try another client of the session.</summary>
    private void Unreachable(string why)
    {
        Stream.Reset(ProtocolErrorCode.BackendConnectFailed);
        End(LoopRelayEnd.Unconnected(why), reset: false);
    }

    /// <summary>Off the loop: the stream's one log line.</summary>
    protected override void OnEnded(in LoopRelayEnd ending)
    {
        if (ending.Kind == LoopRelayEndKind.Unconnected)
        {
            TcpClientLog.TargetUnreachable(_relay.Logger, _id, _relay.TargetText, ending.Detail!);
            return;
        }

        // What the target sent, counted as read (the writer may not have taken the last frames yet).
        TcpClientLog.Ended(_relay.Logger, _id, _caller, _relay.TargetText, Reason(ending), FromSocket, Stream.ReceivedBytes);
    }

    private string Reason(in LoopRelayEnd ending)
    {
        if (ending.Kind == LoopRelayEndKind.Closed)
        {
            return "closed by both sides";
        }

        if (ending.Kind == LoopRelayEndKind.SocketFailed)
        {
            return $"the target broke the connection ({(ending.Error.Kind == LoopErrorKind.LoopStopped ? "the client is stopping" : Describe(ending.Error))})";
        }

        ProtocolErrorCode? code = Stream.ResetCode;
        return !Stream.Uplink.IsOpen ? $"the uplink was lost ({Stream.Uplink.CloseReason})"
            : $"the server reset the stream ({code}{(code == ProtocolErrorCode.Cancelled ? ": the caller went away" : string.Empty)})";
    }
}
