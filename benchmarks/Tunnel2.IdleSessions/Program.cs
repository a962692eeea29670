using System.Collections.Concurrent;
using System.Diagnostics;
using System.Runtime.InteropServices;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Tunnel2.Hosting;
using Tunnel2.IdleSessions;
using Tunnel2.TunnelClient.Backends;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.Diagnostics;
using Tunnel2.TunnelClient.Health;
using Tunnel2.TunnelClient.Uplinks;

// dotnet benchmarks/Tunnel2.IdleSessions/bin/Release/net10.0/Tunnel2.IdleSessions.dll --help
if (ProgramHost.WantsHelp(args))
{
    Console.WriteLine(IdleOptions.HelpText);
    return 0;
}

IdleOptions options;
try
{
    options = IdleOptions.Parse(args);
}
catch (ArgumentException ex)
{
    Console.Error.WriteLine($"idle-sessions: {ex.Message} (see --help)");
    return 2;
}

using var stop = new CancellationTokenSource();
Console.CancelKeyPress += (_, e) =>
{
    e.Cancel = true;
    stop.Cancel();
};
using PosixSignalRegistration sigterm = PosixSignalRegistration.Create(PosixSignal.SIGTERM, context =>
{
    context.Cancel = true;
    stop.Cancel();
});

// Warnings only: 1,000 uplinks each log their close at the end.
await using ServiceProvider services = new ServiceCollection()
    .AddLogging(logging => logging.AddSimpleConsole(console => console.SingleLine = true).SetMinimumLevel(LogLevel.Warning))
    .AddMetrics()
    .AddSingleton<TunnelClientStatus>()
    .AddSingleton<TunnelClientMetrics>()
    .AddSingleton<BackendSet>()
    .AddSingleton<BackendHealth>() // no health path: always ready
    .AddSingleton(Options.Create(new TunnelClientOptions { Backends = { Urls = "http://127.0.0.1:9" }, Token = options.Token }))
    .BuildServiceProvider();
ILoggerFactory loggerFactory = services.GetRequiredService<ILoggerFactory>();
// No request reaches an idle session; every client uplink still has a handler for the streams the server opens.
var relay = new RefusingHandler();

long? rssBefore = options.ServerPid is { } pid ? ProcessMemory.ReadRssKiB(pid) : null;
Log($"opening {options.Sessions} uplinks to {options.Server} ({options.ConnectParallelism} logins at once), sessions {options.SessionPrefix}{1:D5}..{options.SessionPrefix}{options.Sessions:D5}");
if (options.ServerPid is { } serverPid)
{
    Log($"server pid {serverPid} VmRSS before: {ProcessMemory.Format(rssBefore)}");
}

var open = new ConcurrentDictionary<int, (DialedUplink Dialed, Task Run)>();
var connectFailures = new ConcurrentBag<string>();
var drops = new ConcurrentQueue<string>();
var clock = Stopwatch.StartNew();
BackendHealth noHealthProbe = services.GetRequiredService<BackendHealth>();
try
{
    await Parallel.ForEachAsync(
        Enumerable.Range(1, options.Sessions),
        new ParallelOptions { MaxDegreeOfParallelism = options.ConnectParallelism, CancellationToken = stop.Token },
        async (index, cancellationToken) =>
        {
            string session = $"{options.SessionPrefix}{index:D5}";
            var dialer = new UplinkDialer(
                Options.Create(new TunnelClientOptions
                {
                    Server = options.Server.ToString(),
                    Session = session,
                    Token = options.Token,
                    Backends = { Urls = "http://127.0.0.1:9" },
                }),
                relay,
                loggerFactory,
                new ClientInstance(),
                noHealthProbe);
            try
            {
                DialedUplink dialed = await dialer.ConnectAsync(options.Server, 0, cancellationToken);
                Task run = RunAsync(dialed, session);
                open[index] = (dialed, run);
            }
            catch (Exception ex) when (ex is UplinkRefusedException or IOException or System.Net.Sockets.SocketException
                                           or InvalidDataException or OperationCanceledException && !stop.IsCancellationRequested)
            {
                connectFailures.Add($"{session}: {ex.Message}");
            }
        });
}
catch (OperationCanceledException) when (stop.IsCancellationRequested)
{
    Log("stopped while connecting");
}

TimeSpan connectTime = clock.Elapsed;
Log($"connected {open.Count}/{options.Sessions} in {connectTime.TotalSeconds:F1} s; {connectFailures.Count} logins failed");
foreach (string failure in connectFailures.Take(5))
{
    Log($"  login failed: {failure}");
}

if (options.ReadyFile is { } readyFile && !stop.IsCancellationRequested)
{
    await File.WriteAllTextAsync(readyFile, $"{open.Count}\n");
}

// Idle: nothing is sent but the uplinks' own keep-alive pings and pongs.
clock.Restart();
using (var ticker = new PeriodicTimer(options.ReportInterval))
{
    using var hold = CancellationTokenSource.CreateLinkedTokenSource(stop.Token);
    if (options.Hold > TimeSpan.Zero)
    {
        hold.CancelAfter(options.Hold);
    }

    try
    {
        while (await ticker.WaitForNextTickAsync(hold.Token))
        {
            Report("idle");
        }
    }
    catch (OperationCanceledException)
    {
        // Hold time over, or SIGTERM/Ctrl+C.
    }
}

Report("end of idle");
bool allStayedUp = drops.IsEmpty && connectFailures.IsEmpty && open.Count == options.Sessions;
foreach (string drop in drops.Take(5))
{
    Log($"  dropped: {drop}");
}

stop.Cancel(); // from here a finishing uplink is ours, not a drop
await Task.WhenAll(open.Values.Select(async entry =>
{
    await entry.Dialed.DisposeAsync();
    await entry.Run;
}));
Log($"closed {open.Count} uplinks; {(allStayedUp ? "every uplink stayed up" : $"{drops.Count} dropped while idle, {connectFailures.Count} logins failed")}");
return allStayedUp ? 0 : 1;

async Task RunAsync(DialedUplink dialed, string session)
{
    await dialed.Uplink.RunAsync();
    if (!stop.IsCancellationRequested)
    {
        drops.Enqueue($"{session}: {dialed.Uplink.CloseReason ?? "closed"}");
    }
}

void Report(string what)
{
    int up = open.Values.Count(entry => entry.Dialed.Uplink.IsOpen);
    string line = $"{what} {clock.Elapsed.TotalSeconds:F0} s: {up}/{options.Sessions} uplinks open, {drops.Count} dropped; this process VmRSS {ProcessMemory.Format(ProcessMemory.ReadRssKiB(Environment.ProcessId))}";
    if (options.ServerPid is { } serverPid)
    {
        long? rss = ProcessMemory.ReadRssKiB(serverPid);
        line += $"; server VmRSS {ProcessMemory.Format(rss)}";
        if (rss is { } now && rssBefore is { } before && up > 0)
        {
            line += $" (+{(now - before) / 1024.0:F1} MiB, {(double)(now - before) / up:F1} KiB per open uplink)";
        }
    }

    Log(line);
}

static void Log(string message) => Console.WriteLine($"[idle-sessions] {message}");
