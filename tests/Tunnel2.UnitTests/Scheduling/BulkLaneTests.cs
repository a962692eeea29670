using System.IO.Pipelines;
using System.Text;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.Protocol.Scheduling;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Scheduling;

/// <summary>The lane that puts bulk body copies behind new exchanges on the thread pool (issue 52 item 4).</summary>
public sealed class BulkLaneTests
{
    private const int Copies = 200;

    [Fact]
    public async Task Work_queued_after_a_crowd_of_copies_runs_before_most_of_them()
    {
        var lane = new BulkLane();
        int done = 0;
        using var firstCopyRuns = new ManualResetEventSlim();
        using var holdFirstCopy = new ManualResetEventSlim();
        Task first = FirstCopyAsync();
        Assert.True(firstCopyRuns.Wait(TimeSpan.FromSeconds(15)), "the lane ran its first copy");
        Task[] copies = [.. Enumerable.Range(1, Copies - 1).Select(_ => CopyAsync())];
        Assert.Equal(Copies - 1, lane.Waiting); // the lane's turn is held by the first copy: the others wait their turn

        var probe = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        ThreadPool.UnsafeQueueUserWorkItem(static state => state.Probe.TrySetResult(state.Read()), (Probe: probe, Read: (Func<int>)(() => Volatile.Read(ref done))), preferLocal: false);
        holdFirstCopy.Set();
        int ranBeforeProbe = await probe.Task.WaitAsync(TimeSpan.FromSeconds(15));
        await Task.WhenAll([first, .. copies]).WaitAsync(TimeSpan.FromSeconds(15));

        // Without the lane all 200 would have been queued ahead of the probe; with it, a turn or two of BatchSize.
        Assert.True(ranBeforeProbe <= 3 * BulkLane.BatchSize, $"{ranBeforeProbe} of {Copies} copies ran before work queued after them");
        Assert.Equal(Copies, Volatile.Read(ref done));
        Assert.Equal(0, lane.Waiting);

        async Task FirstCopyAsync()
        {
            await lane.Yield();
            firstCopyRuns.Set();
            holdFirstCopy.Wait(TimeSpan.FromSeconds(15));
            Interlocked.Increment(ref done);
        }

        async Task CopyAsync()
        {
            await lane.Yield();
            Interlocked.Increment(ref done);
        }
    }

    [Fact]
    public async Task Copies_resume_in_the_order_they_yielded()
    {
        var lane = new BulkLane();
        var order = new List<int>();
        var gate = new object();
        Task[] copies = new Task[50];
        for (int i = 0; i < copies.Length; i++)
        {
            copies[i] = CopyAsync(i);
        }

        await Task.WhenAll(copies).WaitAsync(TimeSpan.FromSeconds(15));

        Assert.Equal(Enumerable.Range(0, copies.Length), order);

        async Task CopyAsync(int n)
        {
            await lane.Yield();
            lock (gate)
            {
                order.Add(n);
            }
        }
    }

    [Fact]
    public async Task A_body_sent_through_the_lane_arrives_whole_and_in_order()
    {
        await using var peer = RawPeer.ForServer(new UplinkSettings { BodyLane = new BulkLane() });
        UplinkStream stream = peer.Uplink.OpenStreamOrFail(new RequestHead("POST", "/upload", []), endStream: false);
        byte[] body = Encoding.ASCII.GetBytes(string.Concat(Enumerable.Range(0, 1000).Select(i => $"{i:D5}")));
        Assert.True(body.Length < UplinkSettings.DefaultInitialStreamWindow);

        var source = new Pipe();
        Task sending = stream.SendBodyAsync(source.Reader, CancellationToken.None);
        await source.Writer.WriteAsync(body.AsMemory(0, 2000));
        await source.Writer.WriteAsync(body.AsMemory(2000));
        await source.Writer.CompleteAsync();
        await sending.WithTimeout();

        (ReceivedFrame last, List<ReceivedFrame> before) = await peer.ReadUntilAsync(f => f.Header.Type == FrameType.Data && f.Header.EndStream);
        List<ReceivedFrame> data = [.. before.FindAll(f => f.Header.Type == FrameType.Data), last];
        Assert.Equal(body, data.SelectMany(f => f.Payload).ToArray());
    }
}
