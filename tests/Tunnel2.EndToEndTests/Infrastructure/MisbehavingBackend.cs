using System.Collections.Concurrent;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// A raw-socket HTTP/1.1 backend on 127.0.0.1 (port 0) that records every request it receives and, on demand, breaks
/// response framing the way buggy or hostile servers do. <c>/innocent/{n}</c> answers <c>innocent-{n}</c> correctly;
/// <c>/bad/{kind}</c> answers <c>first</c> (or no body where the status has none) and then misbehaves as
/// <see cref="Misbehaviours"/> lists. Whatever it sends beyond a response is <see cref="Injected"/>: a caller that ever
/// sees <c>INJECTED</c> got bytes that belonged to nobody's request.
/// </summary>
public sealed class MisbehavingBackend : IAsyncDisposable
{
    public const string Injected = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 8\r\n\r\nINJECTED";

    private readonly TcpListener _listener;
    private readonly CancellationTokenSource _stop = new();
    private readonly ConcurrentQueue<ReceivedRequest> _requests = new();
    private readonly ConcurrentQueue<string> _requestLines = new();
    private readonly ConcurrentDictionary<int, Connection> _connections = new();
    private readonly Task _accepting;
    private int _nextConnection;
    private int _lateResponses;

    private MisbehavingBackend()
    {
        _listener = new TcpListener(IPAddress.Loopback, 0);
        _listener.Start();
        Url = new Uri($"http://127.0.0.1:{((IPEndPoint)_listener.LocalEndpoint).Port}");
        _accepting = AcceptAsync();
    }

    /// <summary>Every way this backend can break HTTP/1.1 framing, as the path segment after <c>/bad/</c>.</summary>
    public static readonly string[] Misbehaviours =
    [
        "two-responses", "long-body", "junk-after-body", "head-with-body", "no-content-with-body", "not-modified-with-body",
        "data-after-last-chunk", "length-and-chunked", "late-response", "bare-lf-in-head", "control-in-head", "folded-head",
    ];

    /// <summary>More header fields than the tunnel's head codec carries (<c>HeadCodec.MaxHeaderCount</c>, 1024), in 16 KiB.</summary>
    public static readonly string ManyHeaders = "HTTP/1.1 200 OK\r\n" + string.Concat(Enumerable.Repeat("X-H: 1\r\n", 2000)) + "Content-Length: 5\r\n\r\nfirst";

    /// <summary>A response head of 80 KiB, over the client's 64 KiB limit.</summary>
    public static readonly string HugeHead = "HTTP/1.1 200 OK\r\nX-Big: " + new string('b', 80 * 1024) + "\r\nContent-Length: 5\r\n\r\nfirst";

    public Uri Url { get; }

    /// <summary>Every request received so far, in order of arrival.</summary>
    public IReadOnlyCollection<ReceivedRequest> Requests => _requests;

    /// <summary>The request line of every head received, as soon as the head is complete (before its body, which may never come).</summary>
    public IReadOnlyCollection<string> RequestLines => _requestLines;

    /// <summary>Late responses written on idle connections (the <c>late-response</c> misbehaviour).</summary>
    public int LateResponsesSent => Volatile.Read(ref _lateResponses);

    public static MisbehavingBackend Start() => new();

    /// <summary>True once the peer (the tunnel client) has closed the connection that carried <paramref name="target"/>.</summary>
    public bool ConnectionOfClosedByPeer(string target)
    {
        foreach (Connection connection in _connections.Values)
        {
            if (connection.Targets.Contains(target))
            {
                return connection.ClosedByPeer;
            }
        }

        return false;
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        _listener.Stop();
        try
        {
            await _accepting;
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException or OperationCanceledException)
        {
            // The listener was stopped under the accept.
        }

        foreach (Connection connection in _connections.Values)
        {
            connection.Socket.Dispose();
        }

        _stop.Dispose();
    }

    private async Task AcceptAsync()
    {
        while (!_stop.IsCancellationRequested)
        {
            Socket socket = await _listener.AcceptSocketAsync(_stop.Token);
            var connection = new Connection(Interlocked.Increment(ref _nextConnection), socket);
            _connections[connection.Id] = connection;
            _ = ServeAsync(connection);
        }
    }

    private async Task ServeAsync(Connection connection)
    {
        var reader = new RawHttpReader(connection.Socket) { HeadRead = _requestLines.Enqueue };
        try
        {
            while (true)
            {
                ReceivedRequest? request = await reader.ReadRequestAsync(_stop.Token);
                if (request is null)
                {
                    connection.ClosedByPeer = true;
                    return;
                }

                _requests.Enqueue(request);
                connection.Targets.Add(request.Target);
                await AnswerAsync(connection.Socket, request);
            }
        }
        catch (Exception ex) when (ex is SocketException or IOException or ObjectDisposedException or OperationCanceledException)
        {
            connection.ClosedByPeer = true;
        }
    }

    private async Task AnswerAsync(Socket socket, ReceivedRequest request)
    {
        string path = request.Target.Split('?')[0];
        string answer = path switch
        {
            _ when path.StartsWith("/innocent/", StringComparison.Ordinal) => Ok("innocent-" + path["/innocent/".Length..]),
            "/bad/two-responses" => Ok("first") + Injected,
            "/bad/long-body" => "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst-and-then-some",
            "/bad/junk-after-body" => Ok("first") + "\0\u0001garbage\r\n\r\n",
            "/bad/head-with-body" => $"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {Injected.Length}\r\n\r\n{Injected}",
            "/bad/no-content-with-body" => $"HTTP/1.1 204 No Content\r\nContent-Length: {Injected.Length}\r\n\r\n{Injected}",
            "/bad/not-modified-with-body" => $"HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\nContent-Length: {Injected.Length}\r\n\r\n{Injected}",
            "/bad/data-after-last-chunk" => "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst\r\n0\r\n\r\n" + Injected,
            "/bad/length-and-chunked" => "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst\r\n0\r\n\r\n",
            "/bad/late-response" => Ok("first"),
            "/bad/bare-lf-in-head" => $"HTTP/1.1 200 OK\r\nX-A: 1\nContent-Length: {Injected.Length}\r\n\r\n{Injected}",
            "/bad/control-in-head" => $"HTTP/1.1 200 OK\r\nX-A: \u0001\r\nContent-Length: {Injected.Length}\r\n\r\n{Injected}",
            "/bad/many-headers" => ManyHeaders,
            "/bad/huge-head" => HugeHead,
            "/bad/zero-status" => "HTTP/1.1 000 OK\r\nContent-Length: 5\r\n\r\nfirst",
            "/bad/folded-head" => $"HTTP/1.1 200 OK\r\nX-A: 1\r\n Content-Length: {Injected.Length}\r\n\r\n{Injected}",
            _ => Ok(request.Target),
        };

        await socket.SendAsync(Encoding.Latin1.GetBytes(answer), SocketFlags.None, _stop.Token);
        if (path == "/bad/late-response")
        {
            // The misbehaviour itself: a second answer nobody asked for, once the connection sits idle in the pool.
            await Task.Delay(100, _stop.Token);
            await socket.SendAsync(Encoding.Latin1.GetBytes(Injected), SocketFlags.None, _stop.Token);
            Interlocked.Increment(ref _lateResponses);
        }
    }

    private static string Ok(string body) =>
        $"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {Encoding.UTF8.GetByteCount(body)}\r\n\r\n{body}";

    private sealed class Connection(int id, Socket socket)
    {
        public int Id { get; } = id;

        public Socket Socket { get; } = socket;

        public ConcurrentBag<string> Targets { get; } = [];

        public volatile bool ClosedByPeer;
    }
}

/// <summary>One request as the backend received it: the request line's parts, the header lines as sent, the body.</summary>
public sealed record ReceivedRequest(string Method, string Target, IReadOnlyList<string> HeaderLines, byte[] Body);

/// <summary>Reads HTTP/1.1 requests off a socket byte for byte (Content-Length or chunked bodies).</summary>
internal sealed class RawHttpReader(Socket socket)
{
    /// <summary>Told each request line once its head is read, before the body.</summary>
    public Action<string>? HeadRead { get; init; }

    private readonly byte[] _buffer = new byte[64 * 1024];
    private int _start;
    private int _end;

    public async Task<ReceivedRequest?> ReadRequestAsync(CancellationToken cancellationToken)
    {
        string? head = await ReadHeadAsync(cancellationToken);
        if (head is null)
        {
            return null;
        }

        string[] lines = head.Split("\r\n");
        HeadRead?.Invoke(lines[0]);
        string[] requestLine = lines[0].Split(' ');
        string[] headerLines = lines[1..];
        long length = 0;
        bool chunked = false;
        foreach (string line in headerLines)
        {
            int colon = line.IndexOf(':', StringComparison.Ordinal);
            string name = colon < 0 ? line : line[..colon];
            string value = colon < 0 ? string.Empty : line[(colon + 1)..].Trim();
            if (name.Equals("Content-Length", StringComparison.OrdinalIgnoreCase))
            {
                length = long.Parse(value, CultureInfo.InvariantCulture);
            }
            else if (name.Equals("Transfer-Encoding", StringComparison.OrdinalIgnoreCase))
            {
                chunked = value.EndsWith("chunked", StringComparison.OrdinalIgnoreCase);
            }
        }

        var body = new MemoryStream();
        if (chunked)
        {
            while (true)
            {
                string sizeLine = await ReadLineAsync(cancellationToken) ?? throw new IOException("closed inside a chunked body");
                long size = long.Parse(sizeLine.Split(';')[0], NumberStyles.HexNumber, CultureInfo.InvariantCulture);
                if (size == 0)
                {
                    await ReadLineAsync(cancellationToken); // the empty line after the last chunk (no trailers sent here)
                    break;
                }

                await CopyAsync(body, size, cancellationToken);
                await ReadLineAsync(cancellationToken);
            }
        }
        else
        {
            await CopyAsync(body, length, cancellationToken);
        }

        return new ReceivedRequest(requestLine[0], requestLine.Length > 1 ? requestLine[1] : string.Empty, headerLines, body.ToArray());
    }

    private Task<string?> ReadHeadAsync(CancellationToken cancellationToken) => ReadUntilAsync("\r\n\r\n"u8.ToArray(), cancellationToken);

    private Task<string?> ReadLineAsync(CancellationToken cancellationToken) => ReadUntilAsync("\r\n"u8.ToArray(), cancellationToken);

    /// <summary>The text before <paramref name="delimiter"/>, consuming both; null when the peer closed first.</summary>
    private async Task<string?> ReadUntilAsync(byte[] delimiter, CancellationToken cancellationToken)
    {
        while (true)
        {
            int end = _buffer.AsSpan(_start, _end - _start).IndexOf(delimiter);
            if (end >= 0)
            {
                string text = Encoding.Latin1.GetString(_buffer, _start, end);
                _start += end + delimiter.Length;
                return text;
            }

            if (!await FillAsync(cancellationToken))
            {
                return null;
            }
        }
    }

    private async Task CopyAsync(Stream destination, long count, CancellationToken cancellationToken)
    {
        while (count > 0)
        {
            if (_start == _end && !await FillAsync(cancellationToken))
            {
                throw new IOException("closed inside a body");
            }

            int take = (int)Math.Min(count, _end - _start);
            destination.Write(_buffer, _start, take);
            _start += take;
            count -= take;
        }
    }

    private async Task<bool> FillAsync(CancellationToken cancellationToken)
    {
        if (_start > 0)
        {
            Array.Copy(_buffer, _start, _buffer, 0, _end - _start);
            _end -= _start;
            _start = 0;
        }

        if (_end == _buffer.Length)
        {
            throw new IOException("request head larger than the test backend's buffer");
        }

        int read = await socket.ReceiveAsync(_buffer.AsMemory(_end), SocketFlags.None, cancellationToken);
        _end += read;
        return read > 0;
    }
}
