using System.Net;
using Microsoft.Extensions.Options;
using Tunnel2.Loops;
using Tunnel2.Loops.Guard;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.TunnelClient.EventLoops;
using Microsoft.Extensions.Logging.Abstractions;
using Tunnel2.TunnelClient.Configuration;

namespace Tunnel2.TunnelClient.Tcp;

/// <summary>
/// The TCP targets on an event loop (issue 52, stage 2; <c>TunnelClient:Tcp:Engine</c> = <c>Loop</c>): the client's one
/// loop thread (<see cref="ClientLoop"/>, shared with its plain-TCP uplinks) holds every target connection. The caller's bytes go from the uplink reader's buffer straight to the
/// target's socket; the target's bytes are read on the loop into pooled buffers handed to the uplink's writer as Data
/// frames (<see cref="LoopTargetConnection"/>). Name resolution runs on the thread pool, never on the loop; so does
/// every log line.
/// </summary>
public sealed class LoopTargetRelay : ITcpTargetRelay, IDisposable
{
    private readonly TcpTarget _target;
    private readonly IPEndPoint? _literal;
    private readonly ILogger _logger;
    private readonly ClientLoop _clientLoop;
    private readonly bool _ownsLoop;

    /// <param name="loop">The client's loop, shared with its uplinks; without it (tests), the relay starts one of its own.</param>
    public LoopTargetRelay(IOptions<TunnelClientOptions> options, ILogger<LoopTargetRelay> logger, ClientLoop? loop = null)
    {
        TcpClientOptions tcp = options.Value.Tcp;
        _target = TcpTarget.Parse(tcp.Target, out _)!;
        _literal = IPAddress.TryParse(_target.Host, out IPAddress? address) ? new IPEndPoint(address, _target.Port) : null;
        ProxyProtocol = tcp.ProxyProtocol == TcpClientOptions.ProxyProtocolV2;
        ConnectTimeout = tcp.ConnectTimeout;
        UnsentBytesLimit = options.Value.Uplink.UnsentBytesLimit;
        // Every line the relay logs goes through the guard: one written on the loop fails (and counts as a fault).
        _logger = new LoopGuardLogger(logger);
        _ownsLoop = loop is null;
        _clientLoop = loop ?? new ClientLoop(NullLogger<ClientLoop>.Instance);
        Loop = _clientLoop.Loop;
    }

    internal EventLoop Loop { get; }

    /// <summary>Exceptions a callback threw on the loop (a bug, such as a guarded call made there); the tests expect none.</summary>
    public int FaultCount => _clientLoop.FaultCount;

    /// <summary>Whether the loop relays the TCP targets: a target, <c>Engine</c> = <c>Loop</c>, and a platform with the loop (Linux x86-64).</summary>
    public static bool IsChosen(TcpClientOptions tcp) =>
        tcp.Target is not null && tcp.Engine == TcpClientOptions.EngineLoop && EventLoop.IsSupported;

    internal ILogger Logger => _logger;

    internal string TargetText => _target.ToString();

    internal bool ProxyProtocol { get; }

    internal TimeSpan ConnectTimeout { get; }

    internal int UnsentBytesLimit { get; }

    /// <summary>
    /// The relay for this client's TCP targets: the loop when <see cref="IsChosen"/>, else the runtime's sockets; also those
    /// when the loop cannot start here (a libc without epoll's entry points), which is logged once.
    /// </summary>
    public static ITcpTargetRelay Choose(IServiceProvider services)
    {
        if (!IsChosen(services.GetRequiredService<IOptions<TunnelClientOptions>>().Value.Tcp))
        {
            return services.GetRequiredService<TcpTargetRelay>();
        }

        try
        {
            return services.GetRequiredService<LoopTargetRelay>();
        }
        catch (Exception ex) when (ex is DllNotFoundException or EntryPointNotFoundException or InvalidOperationException)
        {
            TcpClientLog.LoopUnavailable(services.GetRequiredService<ILogger<LoopTargetRelay>>(), ex.Message);
            return services.GetRequiredService<TcpTargetRelay>();
        }
    }

    public void OnStreamOpened(IByteStream stream)
    {
        var connection = new LoopTargetConnection(this, stream);
        if (_literal is { } endPoint)
        {
            Loop.Post(static state => { var (c, to) = ((LoopTargetConnection, IPEndPoint))state!; c.StartConnect(to); }, (connection, endPoint));
            return;
        }

        LoopGuard.OffLoop(Loop, () => GuardedCalls.ResolveAsync(_target.Host, CancellationToken.None), connection.OnResolved);
    }

    internal IPEndPoint? PickAddress(IPAddress[] addresses)
    {
        // The first IPv4 address, else the first: what Socket.ConnectAsync(host) tries first on a dual-stack host too.
        IPAddress? pick = Array.Find(addresses, a => a.AddressFamily == System.Net.Sockets.AddressFamily.InterNetwork) ?? addresses.FirstOrDefault();
        return pick is null ? null : new IPEndPoint(pick, _target.Port);
    }

    public void Dispose()
    {
        if (_ownsLoop)
        {
            _clientLoop.Dispose();
        }
    }
}
