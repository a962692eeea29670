using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Tunnel2.Loops.Guard;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.Protocol.Tcp;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.Tcp;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Tcp.LoopRelay;

/// <summary>
/// The client's TCP relay on its event loop between an in-memory uplink pair and a real target socket: the test plays
/// the server (it opens TCP streams on the server-role uplink) and the target (each accepted connection goes to
/// <see cref="AcceptAsync"/>). Logging goes through <see cref="LoopGuardLoggerProvider"/>, so a log call on the loop
/// fails; it and every error logged are collected and fail the test at dispose.
/// </summary>
internal sealed class LoopRelayHarness : IAsyncDisposable
{
    public static readonly TcpStreamOpen Open = TcpStreamOpen.Of(new IPEndPoint(IPAddress.Parse("192.0.2.7"), 50123), new IPEndPoint(IPAddress.Loopback, 20001));

    private readonly Socket _listener;
    private readonly ILoggerFactory _logging;
    private readonly LogRecorder _errors = new LogRecorder(LogLevel.Information);

    private LoopRelayHarness(Socket listener, string? target, string proxyProtocol, UplinkSettings? settings)
    {
        _listener = listener;
        _logging = LoggerFactory.Create(builder => builder.AddProvider(new LoopGuardLoggerProvider()).AddProvider(_errors).SetMinimumLevel(LogLevel.Trace));
        var options = new TunnelClientOptions();
        options.Tcp.Target = target ?? $"127.0.0.1:{((IPEndPoint)listener.LocalEndPoint!).Port}";
        options.Tcp.ProxyProtocol = proxyProtocol;
        options.Tcp.ConnectTimeout = TimeSpan.FromSeconds(5);
        Relay = new LoopTargetRelay(Options.Create(options), _logging.CreateLogger<LoopTargetRelay>());
        Pair = UplinkPair.Start(settings, new RecordingStreamHandler { OnOpened = Relay.OnStreamOpened });
    }

    public LoopTargetRelay Relay { get; }

    /// <summary>The harness's logging (guarded, recorded): a server door in front of this client logs here too.</summary>
    public ILoggerFactory Logging => _logging;

    public UplinkPair Pair { get; }

    /// <summary>Log lines at Information and above, as "Level: message".</summary>
    public IReadOnlyCollection<string> Lines => _errors.Lines;

    public static LoopRelayHarness Start(string? target = null, string proxyProtocol = TcpClientOptions.ProxyProtocolOff, UplinkSettings? settings = null)
    {
        var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen(4096);
        return new LoopRelayHarness(listener, target, proxyProtocol, settings);
    }

    /// <summary>Opens a TCP stream as the server does for a caller; the relay dials the target.</summary>
    public UplinkStream OpenStream()
    {
        Assert.Equal(StreamOpenStatus.Opened, Pair.Server.TryOpenTcpStream(Open, out UplinkStream? stream));
        return stream!;
    }

    /// <summary>The next connection the relay made to the target.</summary>
    public async Task<Socket> AcceptAsync()
    {
        Socket accepted = await _listener.AcceptAsync().WaitAsync(TimeSpan.FromSeconds(30));
        accepted.NoDelay = true;
        return accepted;
    }

    /// <summary>Waits (polling, with a deadline) until the relay has logged a line containing <paramref name="text"/>.</summary>
    public async Task<string> WaitForLineAsync(string text)
    {
        DateTime deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
        while (DateTime.UtcNow < deadline)
        {
            if (_errors.Lines.FirstOrDefault(line => line.Contains(text, StringComparison.Ordinal)) is { } line)
            {
                return line;
            }

            await Task.Delay(20);
        }

        throw new TimeoutException($"No log line with '{text}'; lines: {string.Join(" | ", _errors.Lines)}");
    }

    public async ValueTask DisposeAsync()
    {
        await Pair.DisposeAsync();
        Relay.Dispose();
        _listener.Dispose();
        _logging.Dispose();
        Assert.Empty(_errors.Errors);
    }
}
