using System.Buffers;
using System.IO.Pipelines;
using System.Net.Sockets;
using System.Text;
using Microsoft.AspNetCore.Connections;
using Tunnel2.ProxyEntry.Upgrades;
using Tunnel2.UnitTests.Loops;

namespace Tunnel2.UnitTests.Hosting.LoopTransport;

/// <summary>
/// An upgraded caller's descriptor handed from the loop transport to a relay on its loop
/// (TunnelServer:Public:UpgradeRelay=Loop): only after all Kestrel flushed (the 101) has gone, with the bytes read past
/// the request head, and never while Kestrel reads its input; Kestrel's end of the connection then leaves it open.
/// </summary>
public sealed class LoopTransportHandoverTests
{
    private const string Head = "GET / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n";

    [Fact]
    public async Task The_answer_goes_out_whole_then_the_descriptor_goes_with_the_bytes_read_past_the_head()
    {
        await using LoopTransportHarness harness = await LoopTransportHarness.StartAsync(callerHandover: true);
        (Socket client, ConnectionContext server) = await harness.ConnectAsync(receiveBuffer: 16 * 1024);
        using (client)
        {
            await client.SendAsync(Encoding.ASCII.GetBytes(Head + "early"));
            await ConsumeHeadAsync(server.Transport.Input, "early".Length);

            byte[] answer = new byte[300_000]; // far more than the client's window: the drain waits for the socket
            Random.Shared.NextBytes(answer);
            Task<byte[]> received = ReadExactlyAsync(client, answer.Length);
            await WriteAsync(server.Transport.Output, answer);
            CallerHandover? handover = await server.Features.Get<ICallerHandoverFeature>()!.HandOverAsync().WaitAsync(LoopHarness.Timeout);

            Assert.NotNull(handover);
            Assert.Same(harness.Loop, handover.Loop);
            Assert.Equal("early", Encoding.ASCII.GetString(handover.Early));
            using Socket caller = handover.ToSocket();
            await caller.SendAsync("after the answer"u8.ToArray());
            Assert.Equal(answer, await received);
            Assert.Equal("after the answer", Encoding.ASCII.GetString(await ReadExactlyAsync(client, 16)));

            await server.DisposeAsync().AsTask().WaitAsync(LoopHarness.Timeout);
            await client.SendAsync("to the new owner"u8.ToArray()); // Kestrel's end closed nothing
            Assert.Equal("to the new owner", Encoding.ASCII.GetString(await ReadExactlyAsync(caller, 16)));
            await caller.SendAsync("still open"u8.ToArray());
            Assert.Equal("still open", Encoding.ASCII.GetString(await ReadExactlyAsync(client, 10)));
        }

        Assert.Equal(0, harness.FaultCount);
    }

    [Fact]
    public async Task While_kestrel_reads_its_input_the_handover_is_refused_and_the_connection_stays_kestrels()
    {
        await using LoopTransportHarness harness = await LoopTransportHarness.StartAsync(callerHandover: true);
        (Socket client, ConnectionContext server) = await harness.ConnectAsync();
        using (client)
        {
            await client.SendAsync(Encoding.ASCII.GetBytes(Head));
            await ConsumeHeadAsync(server.Transport.Input, 0);
            ValueTask<ReadResult> reading = server.Transport.Input.ReadAsync(); // the task relay's read of the upgraded stream

            CallerHandover? handover = await server.Features.Get<ICallerHandoverFeature>()!.HandOverAsync().WaitAsync(LoopHarness.Timeout);

            Assert.Null(handover);
            await client.SendAsync("still kestrel's"u8.ToArray());
            ReadResult read = await reading.AsTask().WaitAsync(LoopHarness.Timeout);
            await Task.Yield(); // off the loop, where the inline read may have resumed this
            Assert.Equal("still kestrel's", Encoding.ASCII.GetString(read.Buffer.ToArray()));
            server.Transport.Input.AdvanceTo(read.Buffer.End);
            await WriteAsync(server.Transport.Output, "and its answer"u8.ToArray());
            await server.DisposeAsync().AsTask().WaitAsync(LoopHarness.Timeout);
            Assert.Equal("and its answer", Encoding.ASCII.GetString(await LoopHarness.ReadToEndAsync(client)));
        }

        Assert.Equal(0, harness.FaultCount);
    }

    [Fact]
    public async Task An_abort_after_the_handover_fires_connection_closed_and_leaves_the_descriptor_open()
    {
        await using LoopTransportHarness harness = await LoopTransportHarness.StartAsync(callerHandover: true);
        (Socket client, ConnectionContext server) = await harness.ConnectAsync();
        using (client)
        {
            var closed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            server.ConnectionClosed.Register(() => closed.SetResult());
            await client.SendAsync(Encoding.ASCII.GetBytes(Head));
            await ConsumeHeadAsync(server.Transport.Input, 0);
            await WriteAsync(server.Transport.Output, "HTTP/1.1 101 Switching Protocols\r\n\r\n"u8.ToArray());
            CallerHandover? handover = await server.Features.Get<ICallerHandoverFeature>()!.HandOverAsync().WaitAsync(LoopHarness.Timeout);
            Assert.NotNull(handover);
            Assert.Empty(handover.Early);
            using Socket caller = handover.ToSocket();
            Assert.False(closed.Task.IsCompleted); // the handover itself is no end of the connection

            server.Abort(new ConnectionAbortedException("the server stops"));

            await closed.Task.WaitAsync(LoopHarness.Timeout); // the relay hears of Kestrel's stop this way
            await caller.SendAsync("open"u8.ToArray());
            Assert.Equal("HTTP/1.1 101 Switching Protocols\r\n\r\nopen", Encoding.ASCII.GetString(await ReadExactlyAsync(client, 40)));
            await server.DisposeAsync().AsTask().WaitAsync(LoopHarness.Timeout);
        }

        Assert.Equal(0, harness.FaultCount);
    }

    [Fact]
    public async Task Without_the_option_a_connection_offers_no_handover()
    {
        await using LoopTransportHarness harness = await LoopTransportHarness.StartAsync();
        (Socket client, ConnectionContext server) = await harness.ConnectAsync();
        using (client)
        {
            Assert.Null(server.Features.Get<ICallerHandoverFeature>());
            await server.DisposeAsync();
        }
    }

    /// <summary>As Kestrel parses a head: consumed up to its end, what follows (<paramref name="after"/> bytes) left in the pipe.</summary>
    private static async Task ConsumeHeadAsync(PipeReader input, int after)
    {
        ReadResult read = await LoopTransportHarness.ReadAtLeastAsync(input, Head.Length + after);
        input.AdvanceTo(read.Buffer.GetPosition(Head.Length), read.Buffer.End);
    }

    /// <summary>Writes as Kestrel does; a flush held back resumes on the loop, so it leaves it.</summary>
    private static async Task WriteAsync(PipeWriter output, byte[] bytes)
    {
        await output.WriteAsync(bytes);
        await Task.Yield();
    }

    private static async Task<byte[]> ReadExactlyAsync(Socket socket, int length)
    {
        byte[] buffer = new byte[length];
        int read = 0;
        while (read < length)
        {
            int n = await socket.ReceiveAsync(buffer.AsMemory(read)).AsTask().WaitAsync(LoopHarness.Timeout);
            Assert.True(n > 0, $"the connection ended after {read} of {length} bytes");
            read += n;
        }

        return buffer;
    }
}
