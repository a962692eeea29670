using Tunnel2.Loops;
using Tunnel2.Loops.Scheduling;

namespace Tunnel2.UnitTests.Loops;

public sealed class EventLoopTests
{
    [Fact]
    public void The_loop_runs_on_this_machine()
    {
        // The unit tests run on Linux x86-64 (CI and the shared box); elsewhere the processes keep the runtime's engine.
        Assert.True(EventLoop.IsSupported);
        Assert.False(EventLoop.IsLoopThread);
    }

    [Fact]
    public async Task Work_posted_from_many_threads_runs_on_the_loop_once_each_in_each_posters_order()
    {
        using var harness = new LoopHarness();
        const int Posters = 4, PerPoster = 10_000;
        int[] lastSeen = [-1, -1, -1, -1];
        int ran = 0, offLoop = 0, outOfOrder = 0;
        var allRan = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);

        Thread[] posters = Enumerable.Range(0, Posters).Select(poster => new Thread(() =>
        {
            for (int i = 0; i < PerPoster; i++)
            {
                int index = i;
                Assert.True(harness.Loop.Post(() =>
                {
                    // Plain increments: only the loop's thread touches these, so no interlocking is needed.
                    offLoop += harness.Loop.IsOnLoopThread ? 0 : 1;
                    outOfOrder += lastSeen[poster] == index - 1 ? 0 : 1;
                    lastSeen[poster] = index;
                    if (++ran == Posters * PerPoster)
                    {
                        allRan.SetResult();
                    }
                }));
            }
        })).ToArray();
        foreach (Thread poster in posters)
        {
            poster.Start();
        }

        await allRan.Task.WaitAsync(LoopHarness.Timeout);
        Assert.Equal(0, await harness.OnLoopAsync(() => offLoop + outOfOrder));
        Assert.Equal(Posters * PerPoster, await harness.OnLoopAsync(() => ran));
    }

    [Fact]
    public void Posts_that_race_the_loops_wake_up_never_leave_it_asleep_with_work_queued()
    {
        // Each poster waits for its work to run before it posts again, so the loop goes idle between posts and every
        // post may land while the loop is clearing its last wake-up: a wake-up lost there once left the loop asleep
        // for good (every later post then wrote nothing either).
        using var harness = new LoopHarness();
        const int Posters = 3, Rounds = 20_000;
        int stuck = 0;
        Thread[] posters = Enumerable.Range(0, Posters).Select(_ => new Thread(() =>
        {
            using var ran = new ManualResetEventSlim();
            for (int round = 0; round < Rounds && Volatile.Read(ref stuck) == 0; round++)
            {
                ran.Reset();
                Assert.True(harness.Loop.Post(ran.Set));
                if (!ran.Wait(LoopHarness.Timeout))
                {
                    Interlocked.Increment(ref stuck);
                }
            }
        })).ToArray();
        foreach (Thread poster in posters)
        {
            poster.Start();
        }
        foreach (Thread poster in posters)
        {
            poster.Join();
        }

        Assert.Equal(0, stuck);
    }

    [Fact]
    public async Task A_timer_runs_on_the_loop_after_its_delay_and_a_cancelled_one_never_runs()
    {
        using var harness = new LoopHarness();
        long start = Environment.TickCount64;
        var cancelledRan = false;
        var fired = new TaskCompletionSource<(long Elapsed, bool OnLoop)>(TaskCreationOptions.RunContinuationsAsynchronously);

        LoopTimer cancelled = harness.Loop.Schedule(TimeSpan.FromMilliseconds(20), _ => cancelledRan = true, null);
        cancelled.Cancel();
        harness.Loop.Schedule(TimeSpan.FromMilliseconds(100), _ => fired.SetResult((Environment.TickCount64 - start, harness.Loop.IsOnLoopThread)), null);

        (long elapsed, bool onLoop) = await fired.Task.WaitAsync(LoopHarness.Timeout);
        Assert.True(elapsed >= 100, $"fired after {elapsed} ms");
        Assert.True(onLoop);
        Assert.False(await harness.OnLoopAsync(() => cancelledRan));
    }

    [Fact]
    public async Task A_turn_end_deferred_by_another_turn_end_runs_next_turn_without_waiting_for_an_event()
    {
        // As on the server's loop: the public transport's drain (a turn-end handler) resumes Kestrel, whose write wakes
        // the uplink's writer after that writer's own turn end has run. Its deferral is for the next turn, which must not
        // first sleep in epoll_wait: with nothing else due (no post, no timer, no ready socket), it slept for good.
        using var harness = new LoopHarness();
        var secondRan = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        var second = new TurnEndWork(() => secondRan.SetResult(harness.Loop.IsOnLoopThread));
        var first = new TurnEndWork(() => harness.Loop.DeferToTurnEnd(second));

        Assert.True(harness.Loop.Post(() => harness.Loop.DeferToTurnEnd(first)));

        Assert.True(await secondRan.Task.WaitAsync(TimeSpan.FromSeconds(10)));
    }

    [Fact]
    public async Task A_callback_that_throws_goes_to_the_fault_handler_and_the_loop_goes_on()
    {
        var faults = new List<Exception>();
        using var loop = new EventLoop("faulty", faults.Add);
        var after = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);

        loop.Post(() => throw new InvalidOperationException("a handler's bug"));
        loop.Post(() => after.SetResult(faults.Count));

        Assert.Equal(1, await after.Task.WaitAsync(LoopHarness.Timeout));
        Assert.Equal("a handler's bug", Assert.Single(faults).Message);
    }

    [Fact]
    public async Task Stopping_runs_what_was_posted_then_ends_the_thread_and_refuses_more_work()
    {
        var harness = new LoopHarness();
        var ranBeforeStop = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        harness.Loop.Post(ranBeforeStop.SetResult);

        harness.Dispose();

        await ranBeforeStop.Task.WaitAsync(LoopHarness.Timeout);
        await harness.Loop.Stopped.WaitAsync(LoopHarness.Timeout);
        Assert.False(harness.Loop.Post(() => { }));
    }

    private sealed class TurnEndWork(Action work) : ILoopTurnEnd
    {
        public void OnTurnEnd() => work();
    }
}
