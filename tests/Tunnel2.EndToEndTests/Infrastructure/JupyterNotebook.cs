using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// A real Jupyter Notebook server from Debian's <c>python3-notebook</c> (6.4), started for one test on a free loopback
/// port with a temporary notebook directory, its own Jupyter directories and a known token, and stopped with its
/// kernels when disposed. It checks <c>Origin</c> and <c>Referer</c> against <c>Host</c>, and serves under a base path
/// of its own when given one: the kind of app a tunnel must not break. Without the package the test fails and says
/// how to get it (tests/debian-packages.txt lists it for the set-up script).
/// </summary>
public sealed class JupyterNotebook : IAsyncDisposable
{
    public const string Token = "jupyter-e2e-token-0123456789";

    private const string Python = "/usr/bin/python3";
    private const string Package = "/usr/lib/python3/dist-packages/notebook/__init__.py";

    private readonly Process _process;
    private readonly StringBuilder _output;

    private JupyterNotebook(Process process, StringBuilder output, Uri url, string directory)
    {
        _process = process;
        _output = output;
        Url = url;
        Directory = directory;
    }

    /// <summary>Its base URL on loopback, base path included, ending in '/'.</summary>
    public Uri Url { get; }

    /// <summary>The notebook directory (files written here are served under <c>files/</c>).</summary>
    public string Directory { get; }

    /// <summary>What the server printed so far (its log says why it blocked a request).</summary>
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

    /// <param name="basePath">Its <c>base_url</c>, e.g. <c>/session/jup/</c>, or <c>/</c>.</param>
    public static async Task<JupyterNotebook> StartAsync(string basePath = "/")
    {
        if (!File.Exists(Python) || !File.Exists(Package))
        {
            throw new InvalidOperationException(
                $"Jupyter Notebook is not installed ({Package} is missing): apt-get install python3-notebook (tests/debian-packages.txt lists what the tests need).");
        }

        string root = Path.Combine(Path.GetTempPath(), "tunnel2-jupyter-" + Guid.NewGuid().ToString("N")[..12]);
        string notebooks = Path.Combine(root, "notebooks");
        System.IO.Directory.CreateDirectory(notebooks);
        int port = FreeLoopbackPort(); // notebook 6.4 takes no --port=0
        var start = new ProcessStartInfo(Python)
        {
            ArgumentList =
            {
                "-m", "notebook", "--no-browser", "--allow-root", "--ip=127.0.0.1", $"--port={port}", "--port-retries=0",
                $"--notebook-dir={notebooks}", $"--NotebookApp.token={Token}", $"--NotebookApp.base_url={basePath}",
                // A notebook reached through a tunnel is remote access: its DNS-rebinding guard would refuse the public host name.
                "--NotebookApp.allow_remote_access=True",
            },
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach ((string name, string folder) in (ReadOnlySpan<(string, string)>)[
                     ("JUPYTER_RUNTIME_DIR", "runtime"), ("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"), ("IPYTHONDIR", "ipython")])
        {
            start.Environment[name] = Path.Combine(root, folder);
        }

        start.Environment["PYDEVD_DISABLE_FILE_VALIDATION"] = "1";
        var output = new StringBuilder();
        Process process = Process.Start(start) ?? throw new InvalidOperationException($"{Python} did not start.");
        process.OutputDataReceived += (_, line) => Append(output, line.Data);
        process.ErrorDataReceived += (_, line) => Append(output, line.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        var notebook = new JupyterNotebook(process, output, new Uri($"http://127.0.0.1:{port}{basePath}"), notebooks);
        try
        {
            await notebook.WaitUntilServingAsync();
        }
        catch
        {
            await notebook.DisposeAsync();
            throw;
        }

        return notebook;
    }

    public async ValueTask DisposeAsync()
    {
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true); // its kernels are its children
        }

        await _process.WaitForExitAsync();
        _process.Dispose();
        try
        {
            System.IO.Directory.Delete(Path.GetDirectoryName(Directory)!, recursive: true);
        }
        catch (IOException)
        {
            // a kernel's file still being closed: the temporary directory is left behind
        }
    }

    private async Task WaitUntilServingAsync()
    {
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(5) };
        await Eventually.WaitUntilAsync(async () =>
        {
            if (_process.HasExited)
            {
                throw new InvalidOperationException($"Jupyter exited with code {_process.ExitCode}:\n{Output}");
            }

            try
            {
                using HttpResponseMessage response = await http.GetAsync(new Uri(Url, "api"));
                return response.StatusCode == HttpStatusCode.OK;
            }
            catch (HttpRequestException)
            {
                return false;
            }
        }, "Jupyter Notebook answers on its API", TimeSpan.FromSeconds(60));
    }

    private static int FreeLoopbackPort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
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
