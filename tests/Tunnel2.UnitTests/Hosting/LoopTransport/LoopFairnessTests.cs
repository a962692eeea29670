using System.IO.Pipelines;
using System.Net.Sockets;
using Microsoft.AspNetCore.Connections;
using Tunnel2.Loops;
using Tunnel2.TunnelServer.Hosting.LoopTransport;
using Tunnel2.UnitTests.Loops;

namespace Tunnel2.UnitTests.Hosting.LoopTransport;

/// <summary>
/// Issue 52 item 4 (the storm's first second): a new caller on the loop listener does not wait behind the crowd's
/// work. Its connection's start runs on the loop (TunnelServer:Public:StartOnLoop), and reading old connections'
/// bytes (request bodies) stops for the turn once the turn's budget is spent (TunnelServer:Public:LoopReadBudget),
/// while a connection's first read never waits.
/// </summary>
public sealed class LoopFairnessTests
{
    private static readonly byte[] Head = "GET / HTTP/1.1\r\nHost: a\r\n\r\n"u8.ToArray();

    [Fact]
    public async Task A_connections_start_continues_on_the_loop_thread()
    {
        await using LoopTransportHarness harness = await LoopTransportHarness.StartAsync();
        (Socket client, ConnectionContext server) = await harness.ConnectAsync();
        using (client)
        {
            var startedOn = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            ConnectionDelegate start = LoopConnectionStart.Middleware(context =>
            {
                startedOn.SetResult(((LoopConnection)context).Loop.IsOnLoopThread);
                return Task.CompletedTask;
            });

            await start(server).WaitAsync(LoopHarness.Timeout); // called here, off the loop, as Kestrel's work item calls it
            Assert.True(await startedOn.Task.WaitAsync(LoopHarness.Timeout), "the rest of the start ran on the loop's thread");
            await server.DisposeAsync();
        }

        Assert.Equal(0, harness.FaultCount);
    }

    [Fact]
    public async Task The_budget_is_spent_within_a_turn_and_renewed_at_its_end()
    {
        using var harness = new LoopHarness();
        var budget = new LoopReadBudget(harness.Loop, bytesPerTurn: 100);
        var none = new LoopReadBudget(harness.Loop, bytesPerTurn: 0);
        var nextTurn = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);

        bool spentInTurn = await harness.OnLoopAsync(() =>
        {
            budget.Spend(60);
            bool early = budget.IsSpent;
            budget.Spend(60);
            none.Spend(1_000_000);
            // Posted from the loop: runs in the next turn, after this one's end.
            harness.Loop.Post(() => nextTurn.SetResult(budget.IsSpent));
            return !early && budget.IsSpent && !none.IsSpent;
        });

        Assert.True(spentInTurn, "spent once 100 bytes were read in the turn; a budget of 0 is never spent");
        Assert.False(await nextTurn.Task.WaitAsync(LoopHarness.Timeout), "renewed at the turn's end");
        Assert.Empty(harness.Faults);
    }

    [Fact]
    public async Task A_spent_budget_holds_old_connections_reads_to_the_next_turn_but_not_a_new_callers_first_read()
    {
        const int Body = 32 * 1024;
        await using LoopTransportHarness harness = await LoopTransportHarness.StartAsync(maxReadBuffer: 1024 * 1024, readBudgetPerTurn: 1);
        (Socket first, ConnectionContext firstServer) = await harness.ConnectAsync();
        (Socket second, ConnectionContext secondServer) = await harness.ConnectAsync();
        (Socket fresh, ConnectionContext freshServer) = await harness.ConnectAsync();
        using (first)
        using (second)
        using (fresh)
        {
            foreach ((Socket client, ConnectionContext server) in new[] { (first, firstServer), (second, secondServer) })
            {
                await client.SendAsync(Head); // their first reads: these two are old connections from now on
                ReadResult head = await LoopTransportHarness.ReadAtLeastAsync(server.Transport.Input, Head.Length);
                server.Transport.Input.AdvanceTo(head.Buffer.End);
            }

            // The loop is held while both old connections' bodies and the new caller's head arrive, so that one turn
            // finds all three ready; what each read in that turn is looked at by work posted meanwhile (the next turn's).
            EventLoop loop = ((LoopConnection)firstServer).Loop;
            using var hold = new ManualResetEventSlim();
            var held = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            Assert.True(loop.Post(() =>
            {
                held.SetResult();
                hold.Wait(LoopHarness.Timeout);
            }));
            await held.Task.WaitAsync(LoopHarness.Timeout);
            await first.SendAsync(new byte[Body]);
            await second.SendAsync(new byte[Body]);
            await fresh.SendAsync(Head);
            var readInTurn = new TaskCompletionSource<long[]>(TaskCreationOptions.RunContinuationsAsynchronously);
            Assert.True(loop.Post(() => readInTurn.SetResult([Buffered(firstServer), Buffered(secondServer), Buffered(freshServer)])));
            hold.Set();

            long[] read = await readInTurn.Task.WaitAsync(LoopHarness.Timeout);
            Assert.Equal(Head.Length, read[2]);
            Assert.Single(read[..2], bytes => bytes > 0); // the first old one spent the budget; the other waited

            // Nothing is stalled: both bodies arrive whole in the later turns.
            Assert.True((await LoopTransportHarness.ReadAtLeastAsync(firstServer.Transport.Input, Body)).Buffer.Length >= Body);
            Assert.True((await LoopTransportHarness.ReadAtLeastAsync(secondServer.Transport.Input, Body)).Buffer.Length >= Body);
            foreach (ConnectionContext server in new[] { firstServer, secondServer, freshServer })
            {
                await server.DisposeAsync();
            }
        }

        Assert.Equal(0, harness.FaultCount);
    }

    /// <summary>On the loop: the bytes the input pipe holds, looked at and not consumed.</summary>
    private static long Buffered(ConnectionContext server)
    {
        PipeReader input = server.Transport.Input;
        if (!input.TryRead(out ReadResult result))
        {
            return 0;
        }

        long length = result.Buffer.Length;
        input.AdvanceTo(result.Buffer.Start, result.Buffer.End);
        return length;
    }
}
