using System.Globalization;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// Debian's OpenSSH server for one test: host and client keys made with ssh-keygen in a temporary directory, sshd in the
/// foreground on a free loopback port, taking only that client key for the user running the tests (no PAM, no passwords).
/// Disposing kills it and deletes the directory.
/// </summary>
public sealed class ScratchSshd : IAsyncDisposable
{
    public const string Sshd = "/usr/sbin/sshd";
    public const string SshKeygen = "/usr/bin/ssh-keygen";
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    private readonly CommandLineTool.Server _server;

    private ScratchSshd(string directory, int port, CommandLineTool.Server server)
    {
        Directory = directory;
        Port = port;
        _server = server;
    }

    /// <summary>The temporary directory: keys, configuration, and room for the test's files.</summary>
    public string Directory { get; }

    public int Port { get; }

    /// <summary>The private key that sshd takes.</summary>
    public string ClientKey => Path.Combine(Directory, "client_key");

    public string Output => _server.Output;

    public static async Task<ScratchSshd> StartAsync()
    {
        CommandLineTool.Require(Sshd, "openssh-server", nameof(ScratchSshd));
        string directory = Path.Combine(Path.GetTempPath(), $"tunnel2-sshd-{Guid.NewGuid().ToString("N")[..12]}");
        System.IO.Directory.CreateDirectory(directory);
        foreach (string key in new[] { "host_key", "client_key" })
        {
            await CommandLineTool.RunAsync(SshKeygen, null, Timeout, "-q", "-t", "ed25519", "-N", "", "-f", Path.Combine(directory, key));
        }

        File.Copy(Path.Combine(directory, "client_key.pub"), Path.Combine(directory, "authorized_keys"));
        if (Environment.IsPrivilegedProcess)
        {
            System.IO.Directory.CreateDirectory("/run/sshd"); // sshd's privilege separation directory, when run as root
        }

        int port = CommandLineTool.FreeLoopbackPort();
        string config = Path.Combine(directory, "sshd_config");
        await File.WriteAllTextAsync(config, $"""
            Port {port.ToString(CultureInfo.InvariantCulture)}
            ListenAddress 127.0.0.1
            HostKey {directory}/host_key
            AuthorizedKeysFile {directory}/authorized_keys
            PidFile {directory}/sshd.pid
            StrictModes no
            UsePAM no
            PasswordAuthentication no
            KbdInteractiveAuthentication no
            PermitRootLogin prohibit-password
            Subsystem sftp internal-sftp

            """);
        var sshd = new ScratchSshd(directory, port, new CommandLineTool.Server(Sshd, "-D", "-e", "-f", config));
        try
        {
            await Eventually.WaitUntilAsync(() =>
            {
                Assert.False(sshd._server.HasExited, $"sshd exited:\n{sshd.Output}");
                return sshd.Output.Contains("Server listening", StringComparison.Ordinal);
            }, "sshd listens");
            return sshd;
        }
        catch
        {
            await sshd.DisposeAsync();
            throw;
        }
    }

    /// <summary>ssh's and scp's options for this server's key, without the port (ssh takes <c>-p</c>, scp <c>-P</c>).</summary>
    public string[] ClientOptions =>
    [
        "-i", ClientKey, "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
    ];

    public async ValueTask DisposeAsync()
    {
        await _server.DisposeAsync();
        if (System.IO.Directory.Exists(Directory))
        {
            System.IO.Directory.Delete(Directory, recursive: true);
        }
    }
}
