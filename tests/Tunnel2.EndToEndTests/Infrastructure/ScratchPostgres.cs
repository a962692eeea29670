using System.Globalization;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// A scratch PostgreSQL cluster from Debian's postgresql package, for one test: <c>initdb</c> in a temporary directory,
/// the server on a free loopback port (trust authentication, no fsync), stopped and deleted when disposed. PostgreSQL
/// refuses to run as root, so under root its commands run as the <c>postgres</c> user the package creates.
/// </summary>
public sealed class ScratchPostgres : IAsyncDisposable
{
    public const string Bin = "/usr/lib/postgresql/15/bin";
    private const string RunUser = "/usr/sbin/runuser";
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(120);

    private readonly string _directory;

    private ScratchPostgres(string directory, int port)
    {
        _directory = directory;
        Port = port;
    }

    public int Port { get; }

    public static async Task<ScratchPostgres> StartAsync()
    {
        CommandLineTool.Require($"{Bin}/initdb", "postgresql", nameof(ScratchPostgres));
        string directory = Path.Combine(Path.GetTempPath(), $"tunnel2-pg-{Guid.NewGuid().ToString("N")[..12]}");
        Directory.CreateDirectory(directory);
        if (Environment.IsPrivilegedProcess)
        {
            await CommandLineTool.RunAsync("/usr/bin/chown", null, Timeout, "postgres:postgres", directory);
        }

        int port = CommandLineTool.FreeLoopbackPort();
        var postgres = new ScratchPostgres(directory, port);
        try
        {
            await RunAsync("initdb", "-D", $"{directory}/data", "-A", "trust", "-U", "postgres", "--no-sync");
            await RunAsync("pg_ctl", "-D", $"{directory}/data", "-l", $"{directory}/log", "-w", "start", "-o",
                $"-p {port.ToString(CultureInfo.InvariantCulture)} -k {directory} -c listen_addresses=127.0.0.1 -c fsync=off");
            return postgres;
        }
        catch
        {
            await postgres.DisposeAsync();
            throw;
        }
    }

    /// <summary>Runs one of PostgreSQL's programs (as the postgres user under root) and fails with its output unless it succeeds.</summary>
    public static async Task<string> RunAsync(string program, params string[] arguments)
    {
        (int exitCode, string output) = Environment.IsPrivilegedProcess
            ? await CommandLineTool.RunAsync(RunUser, null, Timeout, ["-u", "postgres", "--", $"{Bin}/{program}", .. arguments])
            : await CommandLineTool.RunAsync($"{Bin}/{program}", null, Timeout, arguments);
        return exitCode == 0 ? output : throw new InvalidOperationException($"{program} {string.Join(' ', arguments)} exited with {exitCode}:\n{output}");
    }

    public async ValueTask DisposeAsync()
    {
        try
        {
            await RunAsync("pg_ctl", "-D", $"{_directory}/data", "-m", "immediate", "-w", "stop");
        }
        catch (InvalidOperationException)
        {
            // not started, or already gone
        }

        if (Directory.Exists(_directory))
        {
            Directory.Delete(_directory, recursive: true);
        }
    }
}
