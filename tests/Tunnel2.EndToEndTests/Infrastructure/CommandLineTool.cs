using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>Runs a program from Debian's packages (redis-cli, psql …) for a test: its exit code and output, or a clear failure.</summary>
public static class CommandLineTool
{
    /// <summary>Fails at once, naming the Debian package, when <paramref name="program"/> is not installed.</summary>
    public static void Require(string program, string package, string tests)
    {
        if (!File.Exists(program))
        {
            throw new InvalidOperationException(
                $"{tests} need Debian's {package} ({program} is missing): apt-get install {package} (tests/debian-packages.txt lists what the tests need; ./test.sh installs them).");
        }
    }

    /// <summary>Runs it to the end (at most <paramref name="timeout"/>), feeding <paramref name="input"/>; the output is stdout then stderr.</summary>
    public static async Task<(int ExitCode, string Output)> RunAsync(string program, string? input, TimeSpan timeout, params string[] arguments)
    {
        var start = new ProcessStartInfo(program)
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        using Process process = Process.Start(start) ?? throw new InvalidOperationException($"{program} did not start.");
        Task<string> stdout = process.StandardOutput.ReadToEndAsync();
        Task<string> stderr = process.StandardError.ReadToEndAsync();
        if (input is not null)
        {
            await process.StandardInput.WriteAsync(input);
        }

        process.StandardInput.Close();
        using var deadline = new CancellationTokenSource(timeout);
        try
        {
            await process.WaitForExitAsync(deadline.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            throw new InvalidOperationException($"{program} {string.Join(' ', arguments)} did not finish in {timeout}.");
        }

        return (process.ExitCode, await stdout + await stderr);
    }

    /// <summary>A loopback port free now (for servers that must be told their port).</summary>
    public static int FreeLoopbackPort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }

    /// <summary>A long-running server process, killed (with its children) when disposed; its output kept for messages.</summary>
    public sealed class Server : IAsyncDisposable
    {
        private readonly Process _process;
        private readonly StringBuilder _output = new();

        public Server(string program, params string[] arguments)
        {
            var start = new ProcessStartInfo(program) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
            foreach (string argument in arguments)
            {
                start.ArgumentList.Add(argument);
            }

            _process = Process.Start(start) ?? throw new InvalidOperationException($"{program} did not start.");
            _process.OutputDataReceived += (_, line) => Append(line.Data);
            _process.ErrorDataReceived += (_, line) => Append(line.Data);
            _process.BeginOutputReadLine();
            _process.BeginErrorReadLine();
        }

        public bool HasExited => _process.HasExited;

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

        public async ValueTask DisposeAsync()
        {
            if (!_process.HasExited)
            {
                _process.Kill(entireProcessTree: true);
            }

            await _process.WaitForExitAsync();
            _process.Dispose();
        }

        private void Append(string? line)
        {
            if (line is not null)
            {
                lock (_output)
                {
                    _output.AppendLine(line);
                }
            }
        }
    }
}
