using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// A Python web app from Debian's packages, run by Debian's own <c>/usr/bin/python3</c> (a python3 earlier on PATH, such
/// as pyenv's, lacks them) for one test: in a temporary directory of its own, on a free loopback port, its output kept
/// for the test's messages. Disposing kills it by its process id, with its children, and deletes the directory.
/// </summary>
public sealed class PythonApp : IAsyncDisposable
{
    public const string Python = "/usr/bin/python3";

    private readonly Process _process;
    private readonly StringBuilder _output;

    private PythonApp(Process process, StringBuilder output, string directory, int port)
    {
        _process = process;
        _output = output;
        Directory = directory;
        Url = new Uri($"http://127.0.0.1:{port}/");
    }

    /// <summary>Where it listens: <c>http://127.0.0.1:port/</c>.</summary>
    public Uri Url { get; }

    /// <summary>Its temporary directory, deleted when it is disposed.</summary>
    public string Directory { get; }

    /// <summary>What it printed so far.</summary>
    public string Output
    {
        get
        {
            lock (_output)
            {
                return _output.ToString();
            }
        }
    }

    /// <summary>Fails at once, naming the Debian package, when Python's <paramref name="module"/> is not installed.</summary>
    public static void Require(string module, string package, string tests)
    {
        string init = $"/usr/lib/python3/dist-packages/{module}/__init__.py";
        if (!File.Exists(Python) || !File.Exists(init))
        {
            throw new InvalidOperationException(
                $"{tests} need Debian's {package} ({init} is missing): apt-get install {package} (tests/debian-packages.txt lists what the tests need; ./test.sh installs them).");
        }
    }

    /// <summary>A new, empty temporary directory; <see cref="StartAsync"/> takes it over, else the caller deletes it.</summary>
    public static string CreateDirectory(string name)
    {
        string directory = Path.Combine(Path.GetTempPath(), $"tunnel2-{name}-{Guid.NewGuid().ToString("N")[..12]}");
        System.IO.Directory.CreateDirectory(directory);
        return directory;
    }

    public static void DeleteDirectory(string directory)
    {
        if (System.IO.Directory.Exists(directory))
        {
            System.IO.Directory.Delete(directory, recursive: true);
        }
    }

    /// <summary>Runs a one-off command (a set-up step) in <paramref name="directory"/> and fails with its output unless it succeeds.</summary>
    public static async Task RunAsync(string directory, IReadOnlyDictionary<string, string> environment, params string[] arguments)
    {
        var output = new StringBuilder();
        using Process process = Start(directory, environment, arguments, output);
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(120));
        try
        {
            await process.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            await process.WaitForExitAsync();
            throw new InvalidOperationException($"python3 {string.Join(' ', arguments)} did not finish in 120 s:\n{Text(output)}");
        }

        process.WaitForExit(); // the output's last lines
        if (process.ExitCode != 0)
        {
            throw new InvalidOperationException($"python3 {string.Join(' ', arguments)} exited with {process.ExitCode}:\n{Text(output)}");
        }
    }

    /// <summary>
    /// Starts <c>python3 arguments…</c> in <paramref name="directory"/> (which it then owns) on a free port, given to
    /// <paramref name="arguments"/> as its <c>{port}</c>, and waits until <paramref name="probe"/> (a path) answers HTTP.
    /// </summary>
    public static async Task<PythonApp> StartAsync(string directory, string probe, IReadOnlyDictionary<string, string> environment, params string[] arguments)
    {
        int port = FreeLoopbackPort(); // runserver and aiohttp would take port 0 but not say which port they got
        string[] withPort = Array.ConvertAll(arguments, argument => argument.Replace("{port}", port.ToString(System.Globalization.CultureInfo.InvariantCulture), StringComparison.Ordinal));
        var output = new StringBuilder();
        Process process;
        try
        {
            process = Start(directory, environment, withPort, output);
        }
        catch
        {
            DeleteDirectory(directory);
            throw;
        }

        var app = new PythonApp(process, output, directory, port);
        try
        {
            await app.WaitUntilServingAsync(probe);
        }
        catch
        {
            await app.DisposeAsync();
            throw;
        }

        return app;
    }

    public async ValueTask DisposeAsync()
    {
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
        }

        await _process.WaitForExitAsync();
        _process.Dispose();
        DeleteDirectory(Directory);
    }

    private static Process Start(string directory, IReadOnlyDictionary<string, string> environment, string[] arguments, StringBuilder output)
    {
        var start = new ProcessStartInfo(Python)
        {
            WorkingDirectory = directory,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        start.Environment["PYTHONUNBUFFERED"] = "1"; // its log lines as they happen, for the test's messages
        foreach ((string name, string value) in environment)
        {
            start.Environment[name] = value;
        }

        Process process = Process.Start(start) ?? throw new InvalidOperationException($"{Python} did not start.");
        process.OutputDataReceived += (_, line) => Append(output, line.Data);
        process.ErrorDataReceived += (_, line) => Append(output, line.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return process;
    }

    private async Task WaitUntilServingAsync(string probe)
    {
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(5) };
        await Eventually.WaitUntilAsync(async () =>
        {
            if (_process.HasExited)
            {
                throw new InvalidOperationException($"python3 exited with code {_process.ExitCode}:\n{Output}");
            }

            try
            {
                using HttpResponseMessage response = await http.GetAsync(new Uri(Url, probe));
                return true;
            }
            catch (HttpRequestException)
            {
                return false;
            }
        }, $"the Python app answers {probe} on {Url}", TimeSpan.FromSeconds(60));
    }

    private static int FreeLoopbackPort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }

    private static string Text(StringBuilder output)
    {
        lock (output)
        {
            return output.ToString();
        }
    }

    private static void Append(StringBuilder output, string? line)
    {
        if (line is null)
        {
            return;
        }

        lock (output)
        {
            output.AppendLine(line);
        }
    }
}
