using System.Globalization;
using System.Text;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Tcp;

/// <summary>
/// A real Redis (Debian's redis-server, started by the test on a free port) behind a TCP session, used with Debian's
/// redis-cli through the session's public TCP port: commands, a value of 1 MiB and a pipeline, each answer checked.
/// </summary>
public sealed class RedisTcpTests
{
    private const string RedisServer = "/usr/bin/redis-server";
    private const string RedisCli = "/usr/bin/redis-cli";
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task Redis_cli_through_the_tunnel_sets_gets_a_MiB_and_pipelines()
    {
        CommandLineTool.Require(RedisServer, "redis-server", nameof(RedisTcpTests));
        CommandLineTool.Require(RedisCli, "redis-tools", nameof(RedisTcpTests));
        int redisPort = CommandLineTool.FreeLoopbackPort();
        string port = redisPort.ToString(CultureInfo.InvariantCulture);
        await using var redis = new CommandLineTool.Server(RedisServer, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no");
        await Eventually.WaitUntilAsync(async () =>
        {
            Assert.False(redis.HasExited, $"redis-server exited:\n{redis.Output}");
            return (await CommandLineTool.RunAsync(RedisCli, null, Timeout, "-p", port, "PING")).Output.Trim() == "PONG";
        }, "redis-server answers PING");

        await using TunnelStack stack = await TcpTunnel.StartStackAsync();
        string session = $"tcp-redis-{Guid.NewGuid():N}"[..30];
        await stack.StartClientAsync(session, backend: null, token: null, maxConcurrency: 100, "--tcp", $"127.0.0.1:{port}");
        string tunnelPort = TcpTunnel.PortOf(stack, session)!.Value.ToString(CultureInfo.InvariantCulture);

        Assert.Equal("OK", await CliAsync(tunnelPort, null, "SET", "greeting", "hello through the tunnel"));
        Assert.Equal("hello through the tunnel", await CliAsync(tunnelPort, null, "GET", "greeting"));

        string big = RandomText(1024 * 1024);
        Assert.Equal("OK", await CliAsync(tunnelPort, big, "-x", "SET", "big"));
        Assert.Equal(big, await CliAsync(tunnelPort, null, "--raw", "GET", "big"));

        var pipeline = new StringBuilder();
        for (int i = 0; i < 1000; i++)
        {
            pipeline.Append("INCR counter\r\n");
        }

        string piped = await CliAsync(tunnelPort, pipeline.ToString(), "--pipe");
        Assert.Contains("errors: 0, replies: 1000", piped, StringComparison.Ordinal);
        Assert.Equal("1000", await CliAsync(tunnelPort, null, "GET", "counter"));
    }

    private static async Task<string> CliAsync(string port, string? input, params string[] command)
    {
        (int exitCode, string output) = await CommandLineTool.RunAsync(RedisCli, input, Timeout, ["-p", port, .. command]);
        Assert.True(exitCode == 0, $"redis-cli {string.Join(' ', command)} exited with {exitCode}: {output}");
        return output.TrimEnd('\n');
    }

    private static string RandomText(int length)
    {
        const string alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        return string.Create(length, 0, static (span, _) =>
        {
            for (int i = 0; i < span.Length; i++)
            {
                span[i] = alphabet[Random.Shared.Next(alphabet.Length)];
            }
        });
    }
}
