using System.Net;
using System.Net.Sockets;
using System.Text;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Http;

/// <summary>
/// A caller that goes away mid-upload ends the request at the backend at once: the client resets its backend
/// connection, so the body bytes still queued in that socket are dropped instead of being fed to a slow backend, which
/// would learn the request is over only after reading all of them. Server and client run as processes.
/// </summary>
public sealed class AbortedUploadTests
{
    private const string Session = "aborted-upload";

    [Fact]
    public async Task A_caller_that_resets_mid_upload_gets_the_backend_connection_reset_and_its_queued_bytes_dropped()
    {
        await using var backend = new HoldingBackend();
        await using ProcessStack stack = await ProcessStack.StartAsync(Session, new ProcessStackOptions { BackendUrl = backend.Url, ProbePath = "/ping" });
        using var caller = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await caller.ConnectAsync(IPAddress.Loopback, stack.PublicUrl.Port);
        await caller.SendAsync(Encoding.ASCII.GetBytes($"POST /session/{Session}/upload HTTP/1.1\r\nHost: aborted\r\nContent-Length: {64 << 20}\r\n\r\n"), SocketFlags.None);

        // The backend reads nothing, so what the caller pushes fills every buffer on the way; once some of it sits in
        // the backend's socket, the caller vanishes with a reset.
        using var stop = new CancellationTokenSource();
        Task pushing = PushAsync(caller, stop.Token);
        Socket upload = await backend.Upload.WaitAsync(TimeSpan.FromSeconds(15));
        await Eventually.WaitUntilAsync(() => upload.Available >= 8 * 1024, "the body reaches the backend's socket");
        await stop.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => pushing);
        caller.LingerState = new LingerOption(true, 0);
        caller.Close();

        (long read, SocketError ending) = await ReadToTheEndAsync(upload).WaitAsync(TimeSpan.FromSeconds(15));

        // A FIN would have come only after every queued byte (Success here); the reset comes after what had arrived.
        Assert.True(ending == SocketError.ConnectionReset,
            $"the backend's connection ended with {ending}, not a reset\nserver:\n{stack.Server.Output}\nclient:\n{stack.Client.Output}");
        Assert.True(read >= 8 * 1024, $"the backend read {read} bytes before the reset");
    }

    private static async Task PushAsync(Socket caller, CancellationToken stop)
    {
        byte[] chunk = new byte[16 * 1024];
        while (true)
        {
            await caller.SendAsync(chunk, SocketFlags.None, stop);
        }
    }

    /// <summary>Reads as fast as the socket gives; returns the bytes and how the connection ended (Success for a FIN).</summary>
    private static async Task<(long Read, SocketError Ending)> ReadToTheEndAsync(Socket socket)
    {
        byte[] buffer = new byte[64 * 1024];
        long read = 0;
        try
        {
            while (await socket.ReceiveAsync(buffer, SocketFlags.None) is int got and > 0)
            {
                read += got;
            }

            return (read, SocketError.Success);
        }
        catch (SocketException ex)
        {
            return (read, ex.SocketErrorCode);
        }
    }

    /// <summary>Answers <c>GET /ping</c>; hands the first upload's socket to the test after its head, without reading its body.</summary>
    private sealed class HoldingBackend : IAsyncDisposable
    {
        private readonly Socket _listener = new(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        private readonly TaskCompletionSource<Socket> _upload = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly CancellationTokenSource _stop = new();
        private readonly Task _accepting;

        public HoldingBackend()
        {
            _listener.ReceiveBufferSize = 16 * 1024;
            _listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            _listener.Listen(64);
            Url = new Uri($"http://127.0.0.1:{((IPEndPoint)_listener.LocalEndPoint!).Port}");
            _accepting = AcceptAsync();
        }

        public Uri Url { get; }

        public Task<Socket> Upload => _upload.Task;

        public async ValueTask DisposeAsync()
        {
            await _stop.CancelAsync();
            _listener.Dispose();
            await _accepting;
            if (_upload.Task.IsCompletedSuccessfully)
            {
                _upload.Task.Result.Dispose();
            }

            _stop.Dispose();
        }

        private async Task AcceptAsync()
        {
            try
            {
                while (true)
                {
                    _ = ServeAsync(await _listener.AcceptAsync(_stop.Token));
                }
            }
            catch (Exception ex) when (ex is OperationCanceledException or ObjectDisposedException or SocketException)
            {
                // Stopped.
            }
        }

        private async Task ServeAsync(Socket socket)
        {
            try
            {
                while (await ReadHeadAsync(socket) is { } head)
                {
                    if (!head.StartsWith("GET ", StringComparison.Ordinal))
                    {
                        _upload.TrySetResult(socket);
                        return;
                    }

                    await socket.SendAsync("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\npong"u8.ToArray(), SocketFlags.None, _stop.Token);
                }

                socket.Dispose();
            }
            catch (Exception ex) when (ex is OperationCanceledException or SocketException or ObjectDisposedException)
            {
                socket.Dispose();
            }
        }

        /// <summary>Reads up to the end of a head one byte at a time, so no body byte is taken with it.</summary>
        private static async Task<string?> ReadHeadAsync(Socket socket)
        {
            byte[] head = new byte[8 * 1024];
            for (int filled = 0; filled < head.Length; filled++)
            {
                if (await socket.ReceiveAsync(head.AsMemory(filled, 1), SocketFlags.None) == 0)
                {
                    return null;
                }

                if (filled >= 3 && head.AsSpan(filled - 3, 4).SequenceEqual("\r\n\r\n"u8))
                {
                    return Encoding.Latin1.GetString(head, 0, filled + 1);
                }
            }

            return null;
        }
    }
}
