using System.Diagnostics;
using System.Text;
using System.Text.RegularExpressions;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// A real TunnelClient or TunnelServer executable run as a child process (<c>dotnet X.dll …</c>), so a test can send
/// it SIGTERM and see its exit code. Output is captured; the process is killed on dispose if still running.
/// </summary>
/// <remarks>
/// The dlls are taken from each project's own bin folder (with its own appsettings.json): the copies next to the
/// tests share one appsettings.json among every referenced executable.
/// </remarks>
public sealed partial class TunnelProcess : IAsyncDisposable
{
    private readonly Process _process;
    private readonly StringBuilder _output = new();
    private readonly Lock _sync = new();
    private bool _disposed;

    private TunnelProcess(Process process, string name)
    {
        _process = process;
        Name = name;
    }

    public string Name { get; }

    public int Id => _process.Id;

    public bool HasExited => _process.HasExited;

    /// <summary>Everything written to stdout and stderr so far.</summary>
    public string Output
    {
        get
        {
            lock (_sync)
            {
                return _output.ToString();
            }
        }
    }

    public static TunnelProcess StartClient(string name, params string[] args) => Start(name, "TunnelClient", args, NoVariables);

    public static TunnelProcess StartServer(string name, params string[] args) => Start(name, "TunnelServer", [.. TunnelStack.NoRateLimits, .. args], NoVariables);

    /// <summary><see cref="StartClient(string, string[])"/> with more environment variables (a runtime switch).</summary>
    public static TunnelProcess StartClient(string name, IReadOnlyDictionary<string, string> environment, string[] args) =>
        Start(name, "TunnelClient", args, environment);

    /// <summary><see cref="StartServer(string, string[])"/> with more environment variables (a runtime switch).</summary>
    public static TunnelProcess StartServer(string name, IReadOnlyDictionary<string, string> environment, string[] args) =>
        Start(name, "TunnelServer", [.. TunnelStack.NoRateLimits, .. args], environment);

    /// <summary>Sends SIGTERM, as a service manager or <c>docker stop</c> does.</summary>
    public void Terminate() => Signal("TERM");

    /// <summary>Sends a signal by name (TERM, STOP, CONT, ...) with kill(1).</summary>
    public void Signal(string name)
    {
        using var kill = Process.Start(new ProcessStartInfo("kill", ["-" + name, _process.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)])
        {
            UseShellExecute = false,
        })!;
        kill.WaitForExit();
        Assert.Equal(0, kill.ExitCode);
    }

    /// <summary>Waits for the process to exit and returns its exit code; fails the test (with the output) when it does not.</summary>
    public async Task<int> WaitForExitAsync(TimeSpan timeout)
    {
        using var cancel = new CancellationTokenSource(timeout);
        try
        {
            await _process.WaitForExitAsync(cancel.Token);
        }
        catch (OperationCanceledException)
        {
            Assert.Fail($"{Name} did not exit within {timeout}. Output:\n{Output}");
        }

        return _process.ExitCode;
    }

    /// <summary>Waits until the output has a line matching <paramref name="pattern"/> and returns the match.</summary>
    public async Task<Match> WaitForOutputAsync(Regex pattern, TimeSpan? timeout = null)
    {
        Match match = Match.Empty;
        await Eventually.WaitUntilAsync(() =>
        {
            match = pattern.Match(Output);
            return match.Success || _process.HasExited;
        }, $"{Name} writes /{pattern}/", timeout);
        Assert.True(match.Success, $"{Name} exited before writing /{pattern}/. Output:\n{Output}");
        return match;
    }

    /// <summary>The public and tunnel URLs a server process reports once it listens.</summary>
    public async Task<(Uri Public, Uri Tunnel)> WaitForServerUrlsAsync()
    {
        Match listening = await WaitForOutputAsync(ListeningLine(), TimeSpan.FromSeconds(30));
        return (new Uri(listening.Groups["public"].Value), new Uri(listening.Groups["tunnel"].Value));
    }

    public async ValueTask DisposeAsync()
    {
        if (_disposed)
        {
            return;
        }

        _disposed = true;
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
            await _process.WaitForExitAsync();
        }

        _process.Dispose();
    }

    private static readonly IReadOnlyDictionary<string, string> NoVariables = new Dictionary<string, string>();

    private static TunnelProcess Start(string name, string project, string[] args, IReadOnlyDictionary<string, string> environment)
    {
        string dotnet = Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } hostPath ? hostPath : "dotnet";
        var start = new ProcessStartInfo(dotnet)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        start.ArgumentList.Add(ExecutablePath(project));
        foreach (string arg in args)
        {
            start.ArgumentList.Add(arg);
        }

        start.Environment["DOTNET_ENVIRONMENT"] = "Production";
        foreach ((string variable, string value) in environment)
        {
            start.Environment[variable] = value;
        }

        var process = new Process { StartInfo = start, EnableRaisingEvents = true };
        var handle = new TunnelProcess(process, name);
        process.OutputDataReceived += (_, e) => handle.Append(e.Data);
        process.ErrorDataReceived += (_, e) => handle.Append(e.Data);
        process.Start();
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return handle;
    }

    private void Append(string? line)
    {
        if (line is null)
        {
            return;
        }

        lock (_sync)
        {
            _output.AppendLine(line);
        }
    }

    /// <summary><c>src/{project}/bin/{Configuration}/net10.0/{project}.dll</c>, built with the tests (they reference the projects).</summary>
    private static string ExecutablePath(string project)
    {
        var directory = new DirectoryInfo(AppContext.BaseDirectory);
        string configuration = AppContext.BaseDirectory.Contains($"{Path.DirectorySeparatorChar}Debug{Path.DirectorySeparatorChar}", StringComparison.Ordinal)
            ? "Debug"
            : "Release";
        while (directory is not null && !File.Exists(Path.Combine(directory.FullName, "Tunnel2.sln")))
        {
            directory = directory.Parent;
        }

        Assert.NotNull(directory);
        string path = Path.Combine(directory.FullName, "src", project, "bin", configuration, "net10.0", $"{project}.dll");
        Assert.True(File.Exists(path), $"{path} is missing: build the solution first.");
        AssertSameBuild(path, project);
        return path;
    }

    /// <summary>
    /// The executable a test starts must be the build the tests were compiled against, not an older one left in
    /// <c>src/*/bin</c> (e.g. after <c>dotnet test --no-build</c> with only the test project rebuilt). Builds are
    /// deterministic, so the same sources give the same module version id.
    /// </summary>
    private static void AssertSameBuild(string path, string project)
    {
        string referenced = Path.Combine(AppContext.BaseDirectory, $"{project}.dll");
        Assert.True(File.Exists(referenced), $"{referenced} is missing: the test project references {project}.");
        Assert.True(ModuleVersionId(path) == ModuleVersionId(referenced),
            $"{path} is not the build the tests were compiled against ({referenced}): rebuild the solution.");
    }

    private static Guid ModuleVersionId(string assemblyPath)
    {
        using var peReader = new System.Reflection.PortableExecutable.PEReader(File.OpenRead(assemblyPath));
        System.Reflection.Metadata.MetadataReader metadata = System.Reflection.Metadata.PEReaderExtensions.GetMetadataReader(peReader);
        return metadata.GetGuid(metadata.GetModuleDefinition().Mvid);
    }

    [GeneratedRegex(@"TunnelServer listening: public (?<public>\S+), tunnel (?<tunnel>\S+)")]
    private static partial Regex ListeningLine();
}
