using System.Net;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Hosting;

/// <summary>
/// The opt-in low-latency mode (docs/running.md): with the runtime's inline-completions switch in their environment,
/// both tunnel processes run socket completions, and the server Kestrel's scheduling, on the epoll threads. The
/// server says so at start, and a crowd of small exchanges and bodies beside them still comes back whole.
/// </summary>
public sealed class LowLatencyModeTests
{
    private const string Session = "low-latency";

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task The_server_says_whether_it_runs_in_low_latency_mode_and_a_crowd_comes_back_whole_either_way(bool lowLatency)
    {
        Dictionary<string, string> environment = lowLatency ? new() { ["DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS"] = "1" } : [];
        await using ProcessStack stack = await ProcessStack.StartAsync(Session, new ProcessStackOptions { Environment = environment });
        using HttpClient http = CallerHttp.Create();

        Task<string>[] pings = [.. Enumerable.Range(0, 200).Select(_ => http.GetStringAsync(stack.SessionUrl("/loadtest/ping")))];
        Task<bool>[] echoes = [.. Enumerable.Range(0, 20).Select(i => EchoesAsync(http, stack, seed: i))];

        Assert.All(await Task.WhenAll(pings), pong => Assert.Equal("pong", pong));
        Assert.All(await Task.WhenAll(echoes), Assert.True);
        Assert.Equal(lowLatency, stack.Server.Output.Contains("Low-latency mode", StringComparison.Ordinal));
    }

    /// <summary>POSTs 256 KiB (over the first window, in frames either side of the writer's direct-send size) and compares the echo.</summary>
    private static async Task<bool> EchoesAsync(HttpClient http, ProcessStack stack, int seed)
    {
        byte[] body = new byte[256 * 1024];
        new Random(seed).NextBytes(body);
        using var content = new ByteArrayContent(body);
        using HttpResponseMessage response = await http.PostAsync(stack.SessionUrl("/loadtest/echo"), content);
        Assert.True(response.StatusCode == HttpStatusCode.OK,
            $"{(int)response.StatusCode} {await response.Content.ReadAsStringAsync()}\nserver:\n{stack.Server.Output}\nclient:\n{stack.Client.Output}");
        byte[] echoed = await response.Content.ReadAsByteArrayAsync();
        return body.AsSpan().SequenceEqual(echoed);
    }
}
