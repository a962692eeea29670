using System.Collections.Concurrent;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// A backend that reads every request body at a fixed rate through a small socket receive buffer, as a slow app or a
/// far-away disk would, so that an upload's bytes back up into whatever sits in front of it. <c>GET /ping</c> is
/// answered at once. Plain sockets: no server framework reads ahead of the rate.
/// </summary>
public sealed class SlowReadingBackend : IAsyncDisposable
{
    private const int ReceiveBuffer = 64 * 1024;
    private static readonly TimeSpan Tick = TimeSpan.FromMilliseconds(50);
    private readonly Socket _listener = new(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
    private readonly CancellationTokenSource _stop = new();
    private readonly ConcurrentBag<Task> _connections = [];
    private readonly ConcurrentQueue<long> _bodies = new();
    private readonly int _bytesPerSecond;
    private readonly Task _accepting;
    private long _bytesRead;
    private int _uploads;

    private SlowReadingBackend(int bytesPerSecond)
    {
        _bytesPerSecond = bytesPerSecond;
        _listener.ReceiveBufferSize = ReceiveBuffer; // accepted sockets inherit it
        _listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        _listener.Listen(4096);
        Url = new Uri($"http://127.0.0.1:{((IPEndPoint)_listener.LocalEndPoint!).Port}");
        _accepting = AcceptAsync();
    }

    public Uri Url { get; }

    /// <summary>All body bytes read so far, over every connection.</summary>
    public long BytesRead => Interlocked.Read(ref _bytesRead);

    /// <summary>Request heads of uploads read so far.</summary>
    public int Uploads => Volatile.Read(ref _uploads);

    /// <summary>The body bytes each finished upload delivered (the caller went away or the body ended).</summary>
    public IReadOnlyCollection<long> Bodies => _bodies;

    public static SlowReadingBackend Start(int bytesPerSecond) => new(bytesPerSecond);

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        _listener.Dispose();
        await _accepting;
        await Task.WhenAll(_connections);
        _stop.Dispose();
    }

    private async Task AcceptAsync()
    {
        try
        {
            while (true)
            {
                Socket connection = await _listener.AcceptAsync(_stop.Token);
                _connections.Add(ServeAsync(connection));
            }
        }
        catch (Exception ex) when (ex is OperationCanceledException or ObjectDisposedException or SocketException)
        {
            // Stopped.
        }
    }

    private async Task ServeAsync(Socket socket)
    {
        using (socket)
        {
            byte[] buffer = new byte[ReceiveBuffer];
            try
            {
                while (await ReadHeadAsync(socket, buffer) is { } head)
                {
                    if (head.StartsWith("GET ", StringComparison.Ordinal))
                    {
                        await socket.SendAsync("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\npong"u8.ToArray(), SocketFlags.None, _stop.Token);
                        continue;
                    }

                    await ReadBodySlowlyAsync(socket, buffer, ContentLength(head));
                    await socket.SendAsync("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"u8.ToArray(), SocketFlags.None, _stop.Token);
                }
            }
            catch (Exception ex) when (ex is OperationCanceledException or SocketException or ObjectDisposedException)
            {
                // The caller or the test went away.
            }
        }
    }

    /// <summary>Reads up to the end of a head, one byte at a time (heads are small), so no body byte is read with it.</summary>
    private static async Task<string?> ReadHeadAsync(Socket socket, byte[] buffer)
    {
        int filled = 0;
        while (filled < buffer.Length)
        {
            int read = await socket.ReceiveAsync(buffer.AsMemory(filled, 1), SocketFlags.None);
            if (read == 0)
            {
                return null;
            }

            filled++;
            if (filled >= 4 && buffer.AsSpan(filled - 4, 4).SequenceEqual("\r\n\r\n"u8))
            {
                return Encoding.Latin1.GetString(buffer, 0, filled);
            }
        }

        return null;
    }

    private static long ContentLength(string head)
    {
        foreach (string line in head.Split("\r\n"))
        {
            if (line.StartsWith("Content-Length:", StringComparison.OrdinalIgnoreCase))
            {
                return long.Parse(line.AsSpan(15).Trim(), System.Globalization.CultureInfo.InvariantCulture);
            }
        }

        return 0;
    }

    /// <summary>Reads <paramref name="length"/> body bytes, at most the rate's share per tick; records what arrived.</summary>
    private async Task ReadBodySlowlyAsync(Socket socket, byte[] buffer, long length)
    {
        long read = 0;
        Interlocked.Increment(ref _uploads);
        try
        {
            await ReadPacedAsync(socket, buffer, length, bytes => read += bytes);
        }
        finally
        {
            _bodies.Enqueue(read);
        }
    }

    private async Task ReadPacedAsync(Socket socket, byte[] buffer, long length, Action<int> arrived)
    {
        long read = 0;
        int perTick = (int)(_bytesPerSecond * Tick.TotalSeconds);
        long started = Stopwatch.GetTimestamp();
        long ticks = 0;
        while (read < length)
        {
            int allowance = perTick;
            while (allowance > 0 && read < length)
            {
                int got = await socket.ReceiveAsync(buffer.AsMemory(0, (int)Math.Min(allowance, length - read)), SocketFlags.None, _stop.Token);
                if (got == 0)
                {
                    return;
                }

                read += got;
                allowance -= got;
                arrived(got);
                Interlocked.Add(ref _bytesRead, got);
            }

            // Paced against the clock from the start, so a late tick does not lower the rate.
            TimeSpan due = (++ticks * Tick) - Stopwatch.GetElapsedTime(started);
            if (due > TimeSpan.Zero)
            {
                await Task.Delay(due, _stop.Token);
            }
        }
    }
}
