namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// A real Jupyter Notebook server from Debian's <c>python3-notebook</c> (6.4), started for one test as a
/// <see cref="PythonApp"/> (a free loopback port, a temporary directory) with a notebook directory, its own Jupyter
/// directories and a known token, and stopped with its kernels when disposed. It checks <c>Origin</c> and
/// <c>Referer</c> against <c>Host</c>, and serves under a base path of its own when given one: the kind of app a tunnel
/// must not break. Without the package the test fails and says how to get it.
/// </summary>
public sealed class JupyterNotebook : IAsyncDisposable
{
    public const string Token = "jupyter-e2e-token-0123456789";

    private readonly PythonApp _app;

    private JupyterNotebook(PythonApp app, string basePath)
    {
        _app = app;
        Url = new Uri(app.Url, basePath);
        Directory = Path.Combine(app.Directory, "notebooks");
    }

    /// <summary>Its base URL on loopback, base path included, ending in '/'.</summary>
    public Uri Url { get; }

    /// <summary>The notebook directory (files written here are served under <c>files/</c>).</summary>
    public string Directory { get; }

    /// <summary>What the server printed so far (its log says why it blocked a request).</summary>
    public string Output => _app.Output;

    /// <param name="basePath">Its <c>base_url</c>, e.g. <c>/session/jup/</c>, or <c>/</c>.</param>
    public static async Task<JupyterNotebook> StartAsync(string basePath = "/")
    {
        PythonApp.Require("notebook", "python3-notebook", "The Jupyter tests");
        string root = PythonApp.CreateDirectory("jupyter");
        System.IO.Directory.CreateDirectory(Path.Combine(root, "notebooks"));
        var environment = new Dictionary<string, string> { ["PYDEVD_DISABLE_FILE_VALIDATION"] = "1" };
        foreach ((string name, string folder) in (ReadOnlySpan<(string, string)>)[
                     ("JUPYTER_RUNTIME_DIR", "runtime"), ("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"), ("IPYTHONDIR", "ipython")])
        {
            environment[name] = Path.Combine(root, folder);
        }

        // notebook 6.4 takes no --port=0; a notebook reached through a tunnel is remote access, and its DNS-rebinding
        // guard would refuse the public host name.
        PythonApp app = await PythonApp.StartAsync(root, basePath.TrimStart('/') + "api", environment,
            "-m", "notebook", "--no-browser", "--allow-root", "--ip=127.0.0.1", "--port={port}", "--port-retries=0",
            $"--notebook-dir={Path.Combine(root, "notebooks")}", $"--NotebookApp.token={Token}", $"--NotebookApp.base_url={basePath}",
            "--NotebookApp.allow_remote_access=True");
        return new JupyterNotebook(app, basePath);
    }

    public async ValueTask DisposeAsync()
    {
        try
        {
            await _app.DisposeAsync(); // kills the server with its kernels (its children), then deletes the directory
        }
        catch (IOException)
        {
            // a kernel's file still being closed: the temporary directory is left behind
        }
    }
}
