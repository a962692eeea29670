using System.Buffers;
using System.Globalization;
using Microsoft.Extensions.Logging.Abstractions;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

/// <summary>
/// Over a connection stream (as the hosts run, <see cref="DuplexPipe.Over(Stream, bool)"/>), the writer's loop sends a
/// large Data payload straight to the connection after its header's batch, while a thread that ends a step may send
/// inline when the loop is idle. Only one of them may write at a time, and nothing may come between a header and its
/// payload: a single stray byte would break the framing, which the peer's reader reports as a protocol error.
/// </summary>
public sealed class InlineSendDirectPayloadTests
{
    [Fact]
    public async Task Inline_sends_and_payloads_sent_straight_to_the_connection_keep_every_exchange_byte_exact()
    {
        // A first window as large as a frame, so large payloads (over the writer's 32 KiB) go out from the first frame on.
        var settings = new UplinkSettings { InitialStreamWindow = 512 * 1024 };
        (PipeStream serverSide, PipeStream clientSide) = PipeStream.CreatePair();
        var handler = new RecordingStreamHandler { OnOpened = stream => _ = EchoAsync(stream) };
        var server = new Uplink(DuplexPipe.Over(serverSide), settings, UplinkRole.Server, NullLogger.Instance);
        var client = new Uplink(DuplexPipe.Over(clientSide), settings, UplinkRole.Client, NullLogger.Instance, handler);
        Task runs = Task.WhenAll(server.RunAsync(), client.RunAsync());

        // Two callers at a time: at most two streams open, so steps go out inline whenever a writer's loop is idle.
        Task[] callers = new Task[2];
        for (int c = 0; c < callers.Length; c++)
        {
            int caller = c;
            callers[c] = Task.Run(() => ExchangeManyAsync(server, caller));
        }

        await Task.WhenAll(callers).WithTimeout();

        Assert.True(server.IsOpen && client.IsOpen, server.CloseReason ?? client.CloseReason);
        server.Close("done");
        client.Close("done");
        await runs.WithTimeout();
    }

    private static async Task ExchangeManyAsync(Uplink server, int caller)
    {
        int[] sizes = [0, 5, 40_000, 300_000, 1_000, 70_000];
        for (int i = 0; i < 60; i++)
        {
            byte[] body = StreamExchangeTests.Pattern(sizes[i % sizes.Length], seed: (caller * 1000) + i);
            UplinkStream stream = server.OpenStreamOrFail(new RequestHead(body.Length == 0 ? "GET" : "POST", $"/{caller}/{i}", []), endStream: body.Length == 0);
            using (stream)
            {
                if (body.Length > 0)
                {
                    await stream.SendAsync(new ReadOnlySequence<byte>(body), endStream: true, CancellationToken.None);
                }

                Assert.Equal(200, (await stream.ReadResponseHeadAsync().WithTimeout()).StatusCode);
                Assert.Equal(body, await stream.ReadAllAsync().WithTimeout());
            }
        }
    }

    /// <summary>The client's side: the request body back, under a head that announces its length (a small one waits for its body).</summary>
    private static async Task EchoAsync(UplinkStream stream)
    {
        using (stream)
        {
            byte[] body = await stream.ReadAllAsync();
            var length = new HeaderField("Content-Length", body.Length.ToString(CultureInfo.InvariantCulture));
            stream.SendResponseHead(new ResponseHead(200, [length]), endStream: body.Length == 0);
            if (body.Length > 0)
            {
                await stream.SendAsync(new ReadOnlySequence<byte>(body), endStream: true, CancellationToken.None);
            }
        }
    }
}
