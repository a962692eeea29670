using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using System.Net.Sockets;
using System.Text;
using Microsoft.AspNetCore.Connections;
using Tunnel2.UnitTests.Loops;

namespace Tunnel2.UnitTests.Hosting.LoopTransport;

/// <summary>
/// The public listener's transport on the server's loop (TunnelServer:Public:Transport=Loop) as Kestrel uses it: what
/// it accepts, reads and sends, and how a connection ends, with real sockets on 127.0.0.1.
/// </summary>
public sealed class LoopTransportTests
{
    [Fact]
    public async Task An_accepted_connection_carries_the_callers_address_from_accept4()
    {
        await using LoopTransportHarness harness = await LoopTransportHarness.StartAsync();
        (Socket client, ConnectionContext server) = await harness.ConnectAsync();
        using (client)
        {
            Assert.Equal(client.LocalEndPoint, server.RemoteEndPoint);
            Assert.Equal(harness.Port, Assert.IsType<IPEndPoint>(server.LocalEndPoint).Port);
            Assert.StartsWith("L", server.ConnectionId, StringComparison.Ordinal);
            await server.DisposeAsync();
        }

        Assert.Equal(0, harness.FaultCount);
    }

    [Fact]
    public async Task Bytes_go_both_ways_and_a_dispose_sends_what_was_written_then_a_fin()
    {
        await using LoopTransportHarness harness = await LoopTransportHarness.StartAsync();
        (Socket client, ConnectionContext server) = await harness.ConnectAsync();
        using (client)
        {
            await client.SendAsync("GET / HTTP/1.1\r\n\r\n"u8.ToArray());
            ReadResult request = await LoopTransportHarness.ReadAtLeastAsync(server.Transport.Input, 18);
            Assert.Equal("GET / HTTP/1.1\r\n\r\n", Encoding.ASCII.GetString(request.Buffer.ToArray()));
            server.Transport.Input.AdvanceTo(request.Buffer.End);

            byte[] body = new byte[300_000]; // several of the pool's segments: one gather send, then the rest on drain
            Random.Shared.NextBytes(body);
            await server.Transport.Output.WriteAsync(body);
            Task dispose = server.DisposeAsync().AsTask();
            byte[] received = await LoopHarness.ReadToEndAsync(client);

            Assert.Equal(body, received);
            await dispose.WaitAsync(LoopHarness.Timeout);
        }

        Assert.Equal(0, harness.FaultCount);
    }

    [Fact]
    public async Task A_callers_half_close_ends_the_input_fires_connection_closed_and_the_response_still_goes_out()
    {
        await using LoopTransportHarness harness = await LoopTransportHarness.StartAsync();
        (Socket client, ConnectionContext server) = await harness.ConnectAsync();
        using (client)
        {
            var closed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            server.ConnectionClosed.Register(() => closed.SetResult());
            await client.SendAsync("last words"u8.ToArray());
            client.Shutdown(SocketShutdown.Send);

            ReadResult read = await LoopTransportHarness.ReadAtLeastAsync(server.Transport.Input, long.MaxValue);
            Assert.True(read.IsCompleted);
            Assert.Equal("last words", Encoding.ASCII.GetString(read.Buffer.ToArray()));
            server.Transport.Input.AdvanceTo(read.Buffer.End);
            await closed.Task.WaitAsync(LoopHarness.Timeout); // Kestrel's RequestAborted, as with the socket transport

            await server.Transport.Output.WriteAsync("the answer"u8.ToArray());
            await server.DisposeAsync();
            Assert.Equal("the answer", Encoding.ASCII.GetString(await LoopHarness.ReadToEndAsync(client)));
        }
    }

    [Fact]
    public async Task An_abort_closes_the_socket_ends_the_input_and_fires_connection_closed()
    {
        await using LoopTransportHarness harness = await LoopTransportHarness.StartAsync();
        (Socket client, ConnectionContext server) = await harness.ConnectAsync();
        using (client)
        {
            var closed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            server.ConnectionClosed.Register(() => closed.SetResult());

            server.Abort(new ConnectionAbortedException("test"));

            await closed.Task.WaitAsync(LoopHarness.Timeout);
            await Assert.ThrowsAnyAsync<Exception>(async () => await LoopTransportHarness.ReadAsync(server.Transport.Input));
            byte[] rest = await LoopHarness.ReadToEndAsync(client);
            Assert.Empty(rest);
            await server.DisposeAsync().AsTask().WaitAsync(LoopHarness.Timeout);
        }
    }

    [Fact]
    public async Task A_caller_that_resets_mid_request_ends_the_input_with_an_error()
    {
        await using LoopTransportHarness harness = await LoopTransportHarness.StartAsync();
        (Socket client, ConnectionContext server) = await harness.ConnectAsync();
        await client.SendAsync("POST / HTTP/1.1\r\nContent-Length: 100\r\n\r\npart"u8.ToArray());
        ReadResult first = await LoopTransportHarness.ReadAtLeastAsync(server.Transport.Input, 4);
        server.Transport.Input.AdvanceTo(first.Buffer.End);
        client.LingerState = new LingerOption(true, 0);
        client.Dispose(); // a reset

        await Eventually.WaitUntilAsync(async () =>
        {
            try
            {
                ReadResult result = await LoopTransportHarness.ReadAsync(server.Transport.Input);
                server.Transport.Input.AdvanceTo(result.Buffer.Start, result.Buffer.End);
                return result.IsCompleted;
            }
            catch (ConnectionResetException)
            {
                return true;
            }
            catch (ConnectionAbortedException)
            {
                return true;
            }
        }, "the input ends once the caller has reset");
        await server.DisposeAsync().AsTask().WaitAsync(LoopHarness.Timeout);
        Assert.Equal(0, harness.FaultCount);
    }

    [Fact]
    public async Task A_caller_that_resets_while_reading_is_paused_is_seen_gone_when_its_input_fails()
    {
        const long MaxReadBuffer = 64 * 1024;
        await using LoopTransportHarness harness = await LoopTransportHarness.StartAsync(MaxReadBuffer, receiveBuffer: 32 * 1024);
        (Socket client, ConnectionContext server) = await harness.ConnectAsync();
        client.SendBufferSize = 32 * 1024;
        Task upload = client.SendAsync(new byte[8 * 1024 * 1024]);
        ReadResult full = await LoopTransportHarness.ReadAtLeastAsync(server.Transport.Input, MaxReadBuffer);
        server.Transport.Input.AdvanceTo(full.Buffer.Start, full.Buffer.End); // nothing consumed: the loop stays paused
        Task<bool> closedWhenInputEnded = ClosedWhenInputEndsAsync(server);

        client.LingerState = new LingerOption(true, 0);
        client.Dispose(); // a reset, which the loop finds as an error event: it is not reading
        await Record.ExceptionAsync(() => upload);

        // The read's continuation runs inline on the loop, where Kestrel reads: by then RequestAborted must be set, or
        // the app takes the failed body read for the upstream's failure (a 502 instead of a caller that left).
        Assert.True(await closedWhenInputEnded.WaitAsync(LoopHarness.Timeout), "ConnectionClosed fired after the input failed");
        await server.DisposeAsync().AsTask().WaitAsync(LoopHarness.Timeout);
        Assert.Equal(0, harness.FaultCount);
    }

    /// <summary>Whether ConnectionClosed had fired when a pending read of the input ended (with an error or its end).</summary>
    private static async Task<bool> ClosedWhenInputEndsAsync(ConnectionContext server)
    {
        try
        {
            while (true)
            {
                ReadResult result = await server.Transport.Input.ReadAsync().ConfigureAwait(false);
                bool closed = server.ConnectionClosed.IsCancellationRequested;
                server.Transport.Input.AdvanceTo(result.Buffer.Start, result.Buffer.End); // examined, not consumed
                if (result.IsCompleted)
                {
                    return closed;
                }
            }
        }
        catch (Exception ex) when (ex is ConnectionResetException or ConnectionAbortedException)
        {
            return server.ConnectionClosed.IsCancellationRequested;
        }
    }

    [Fact]
    public async Task Reading_stops_while_the_input_pipe_is_full_and_resumes_when_kestrel_consumes()
    {
        const long MaxReadBuffer = 64 * 1024;
        const int Total = 8 * 1024 * 1024;
        await using LoopTransportHarness harness = await LoopTransportHarness.StartAsync(MaxReadBuffer, receiveBuffer: 32 * 1024);
        (Socket client, ConnectionContext server) = await harness.ConnectAsync();
        using (client)
        {
            client.SendBufferSize = 32 * 1024;
            Task upload = client.SendAsync(new byte[Total]);

            ReadResult full = await LoopTransportHarness.ReadAtLeastAsync(server.Transport.Input, MaxReadBuffer);
            // At most one turn's reads past the threshold: the loop stopped reading, so the caller's send is held back.
            Assert.InRange(full.Buffer.Length, MaxReadBuffer, MaxReadBuffer + (4 * 4096) + (64 * 1024));
            Assert.False(upload.IsCompleted);
            long received = full.Buffer.Length;
            server.Transport.Input.AdvanceTo(full.Buffer.End);

            while (received < Total)
            {
                ReadResult more = await LoopTransportHarness.ReadAsync(server.Transport.Input);
                received += more.Buffer.Length;
                server.Transport.Input.AdvanceTo(more.Buffer.End);
            }

            await upload.WaitAsync(LoopHarness.Timeout);
            Assert.Equal(Total, received);
            await server.DisposeAsync();
        }

        Assert.Equal(0, harness.FaultCount);
    }

    [Fact]
    public async Task A_response_larger_than_the_callers_window_waits_for_the_socket_and_arrives_whole()
    {
        await using LoopTransportHarness harness = await LoopTransportHarness.StartAsync();
        (Socket client, ConnectionContext server) = await harness.ConnectAsync(receiveBuffer: 16 * 1024);
        using (client)
        {
            byte[] body = new byte[4 * 1024 * 1024];
            Random.Shared.NextBytes(body);
            Task write = Task.Run(async () =>
            {
                for (int offset = 0; offset < body.Length; offset += 64 * 1024)
                {
                    await server.Transport.Output.WriteAsync(body.AsMemory(offset, 64 * 1024)); // waits while the pipe is full
                }

                await server.DisposeAsync();
            });

            byte[] received = await LoopHarness.ReadToEndAsync(client);
            await write.WaitAsync(LoopHarness.Timeout);
            Assert.Equal(body.Length, received.Length);
            Assert.True(body.AsSpan().SequenceEqual(received));
        }
    }

    [Fact]
    public async Task Only_loop_end_points_are_bound_by_the_loop_transport()
    {
        using var factory = new Tunnel2.TunnelServer.Hosting.LoopTransport.LoopTransportFactory(() => null, _ => throw new InvalidOperationException(),
            default, MemoryPool<byte>.Shared);

        Assert.False(factory.CanBind(new IPEndPoint(IPAddress.Loopback, 0)));
        await Assert.ThrowsAsync<NotSupportedException>(async () => await factory.BindAsync(new IPEndPoint(IPAddress.Loopback, 0)));
    }
}
