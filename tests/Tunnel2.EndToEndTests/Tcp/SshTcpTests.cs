using System.Security.Cryptography;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Tcp;

/// <summary>
/// OpenSSH through a TCP session: Debian's sshd, started by the test on a free port, reached with ssh and scp through the
/// session's public TCP port; 100 MiB up and back down, byte-exact.
/// </summary>
public sealed class SshTcpTests
{
    private const string Ssh = "/usr/bin/ssh";
    private const string Scp = "/usr/bin/scp";
    private static readonly TimeSpan Timeout = TimeSpan.FromMinutes(3);

    [Fact]
    public async Task Ssh_runs_a_command_and_scp_copies_100_MiB_up_and_down_byte_exact()
    {
        CommandLineTool.Require(Scp, "openssh-client", nameof(SshTcpTests));
        await using ScratchSshd sshd = await ScratchSshd.StartAsync();
        await using TunnelStack stack = await TcpTunnel.StartStackAsync();
        string session = $"tcp-ssh-{Guid.NewGuid():N}"[..30];
        await stack.StartClientAsync(session, backend: null, token: null, maxConcurrency: 100, "--tcp", $"127.0.0.1:{sshd.Port}");
        string port = TcpTunnel.PortOf(stack, session)!.Value.ToString(System.Globalization.CultureInfo.InvariantCulture);
        string user = Environment.UserName;
        string[] sshOptions = [.. sshd.ClientOptions, "-p", port];
        string[] scpOptions = [.. sshd.ClientOptions, "-P", port];

        (int exitCode, string output) = await CommandLineTool.RunAsync(Ssh, null, Timeout, [.. sshOptions, $"{user}@127.0.0.1", "echo", "through-the-tunnel"]);
        Assert.True(exitCode == 0, $"ssh exited with {exitCode}: {output}\nsshd:\n{sshd.Output}");
        Assert.Equal("through-the-tunnel", output.Trim());

        string original = Path.Combine(sshd.Directory, "original.bin");
        await File.WriteAllBytesAsync(original, RandomNumberGenerator.GetBytes(100 * 1024 * 1024));
        string uploaded = Path.Combine(sshd.Directory, "uploaded.bin");
        string downloaded = Path.Combine(sshd.Directory, "downloaded.bin");
        await ScpAsync(scpOptions, original, $"{user}@127.0.0.1:{uploaded}");
        await ScpAsync(scpOptions, $"{user}@127.0.0.1:{uploaded}", downloaded);

        byte[] expected = await HashAsync(original);
        Assert.Equal(expected, await HashAsync(uploaded));
        Assert.Equal(expected, await HashAsync(downloaded));
    }

    private static async Task ScpAsync(string[] options, string from, string to)
    {
        (int exitCode, string output) = await CommandLineTool.RunAsync(Scp, null, Timeout, [.. options, from, to]);
        Assert.True(exitCode == 0, $"scp {from} {to} exited with {exitCode}: {output}");
    }

    private static async Task<byte[]> HashAsync(string path)
    {
        await using FileStream file = File.OpenRead(path);
        return await SHA256.HashDataAsync(file);
    }
}
