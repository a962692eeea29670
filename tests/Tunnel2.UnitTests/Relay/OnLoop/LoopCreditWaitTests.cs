using System.Runtime.CompilerServices;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.TunnelClient.Relay.OnLoop;
using Tunnel2.UnitTests.Infrastructure;
using Tunnel2.UnitTests.Loops;

namespace Tunnel2.UnitTests.Relay.OnLoop;

/// <summary>
/// A body read on the client's loop that ran out of credit goes on on the loop when the peer grants more (the stream's
/// own wait resumes on the thread pool), and a stream that fails ends the wait.
/// </summary>
public sealed class LoopCreditWaitTests : IDisposable
{
    private const int Window = 16 * 1024;
    private readonly LoopHarness _harness = new("credit-wait-test");

    public void Dispose() => _harness.Dispose();

    [Fact]
    public async Task A_grant_from_another_thread_resumes_the_reader_on_the_loop()
    {
        await using var peer = RawPeer.ForServer(new UplinkSettings { InitialStreamWindow = Window });
        UplinkStream stream = peer.Uplink.OpenStreamOrFail(new RequestHead("POST", "/", []), endStream: false);
        Assert.Equal(Window, stream.TryTakeSendCredit(int.MaxValue));

        Task<bool> resumedOnLoop = ObserveAsync(new LoopCreditWait(_harness.Loop).WaitAsync(stream));
        Assert.False(resumedOnLoop.IsCompleted);
        await peer.SendFrameAsync(FrameType.WindowUpdate, stream.Id, FrameBytes.U32(1000));

        Assert.True(await resumedOnLoop.WaitAsync(LoopHarness.Timeout), "the reader should go on on the loop");
        Assert.Equal(1000, stream.TryTakeSendCredit(int.MaxValue));
    }

    [Fact]
    public async Task A_stream_that_fails_ends_the_wait()
    {
        await using var peer = RawPeer.ForServer(new UplinkSettings { InitialStreamWindow = Window });
        UplinkStream stream = peer.Uplink.OpenStreamOrFail(new RequestHead("POST", "/", []), endStream: false);
        Assert.Equal(Window, stream.TryTakeSendCredit(int.MaxValue));

        Task<bool> resumedOnLoop = ObserveAsync(new LoopCreditWait(_harness.Loop).WaitAsync(stream));
        stream.Reset(ProtocolErrorCode.Cancelled);

        Assert.True(await resumedOnLoop.WaitAsync(LoopHarness.Timeout));
        Assert.True(stream.IsAborted);
    }

    /// <summary>Completes with whether the wait's continuation ran on the harness's loop.</summary>
    private Task<bool> ObserveAsync(ValueTask wait)
    {
        var resumed = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        ConfiguredValueTaskAwaitable.ConfiguredValueTaskAwaiter awaiter = wait.ConfigureAwait(false).GetAwaiter();
        awaiter.UnsafeOnCompleted(() =>
        {
            awaiter.GetResult();
            resumed.SetResult(_harness.Loop.IsOnLoopThread);
        });
        return resumed.Task;
    }
}
