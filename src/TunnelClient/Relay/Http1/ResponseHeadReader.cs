using System.Buffers;
using System.Globalization;
using System.IO.Pipelines;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Http1;

namespace Tunnel2.TunnelClient.Relay.Http1;

/// <summary>How the backend delimits its response body.</summary>
internal enum BodyFraming
{
    None,
    ContentLength,
    Chunked,
    UntilClose,
}

/// <summary>A parsed HTTP/1.1 response head, hop-by-hop headers already removed.</summary>
/// <param name="CloseCause">Why the head alone already rules out reusing the connection; null when it does not.</param>
internal sealed record BackendResponseHead(int StatusCode, List<HeaderField> Headers, BodyFraming Framing, long ContentLength, CloseCause? CloseCause)
{
    public bool KeepAlive => CloseCause is null;
}

/// <summary>
/// Reads the backend's response head (skipping 1xx interim answers) off the connection with the tunnel's one HTTP/1
/// head parser, <see cref="Http1Head"/>, and decides how its body is framed.
/// </summary>
internal static class ResponseHeadReader
{
    private const int MaxHeadBytes = 64 * 1024;
    private const int SwitchingProtocols = 101;

    /// <summary>The head, or null when the backend closed the connection before sending a byte.</summary>
    /// <exception cref="InvalidDataException">The answer is not HTTP/1.x or its head is too large.</exception>
    public static ValueTask<BackendResponseHead?> ReadAsync(PipeReader input, bool isHeadRequest, CancellationToken cancellationToken) =>
        ReadAsync(input, readAhead: null, isHeadRequest, upgradeRequested: false, cancellationToken);

    /// <summary>The head, or null when the backend closed the connection before sending a byte.</summary>
    /// <param name="readAhead">A read of <paramref name="input"/> already started (a pooled connection's), taken as the first read.</param>
    /// <param name="upgradeRequested">The request asked to switch protocols: a 101 is then its final answer, not an interim one.</param>
    /// <exception cref="InvalidDataException">
    /// The answer is not HTTP/1.x, its head is too large, or it is a 101 to a request that asked for no upgrade.
    /// </exception>
    public static async ValueTask<BackendResponseHead?> ReadAsync(
        PipeReader input, ValueTask<ReadResult>? readAhead, bool isHeadRequest, bool upgradeRequested, CancellationToken cancellationToken)
    {
        bool interim = false;
        while (true)
        {
            ReadResult result = readAhead is { } pending
                ? await FinishReadAheadAsync(input, pending, cancellationToken)
                : await input.ReadAsync(cancellationToken);
            readAhead = null;
            if (result.IsCanceled)
            {
                // The exchange was aborted (a token, or the stream's abort listener cancelling the pending read).
                input.AdvanceTo(result.Buffer.Start);
                cancellationToken.ThrowIfCancellationRequested();
                throw new OperationCanceledException("The exchange was aborted while waiting for the response head.");
            }

            ReadOnlySequence<byte> buffer = result.Buffer;
            if (TryReadHead(input, result, ref buffer) is { } head)
            {
                input.AdvanceTo(buffer.Start);
                BackendResponseHead parsed = Parse(head, isHeadRequest, upgradeRequested);
                if (parsed.StatusCode is >= 100 and < 200 and not SwitchingProtocols)
                {
                    interim = true;
                    continue; // 100 Continue and friends: the final answer follows
                }

                return parsed;
            }

            if (result.IsCompleted)
            {
                ThrowIfEndedInsideAnswer(buffer, interim);
                input.AdvanceTo(buffer.End);
                return null;
            }

            input.AdvanceTo(buffer.Start, buffer.End);
        }
    }

    /// <summary>One head from the buffer, or null while it is incomplete.</summary>
    private static Http1Head? TryReadHead(PipeReader input, in ReadResult result, ref ReadOnlySequence<byte> buffer)
    {
        try
        {
            Http1Head.TryRead(ref buffer, MaxHeadBytes, out Http1Head? head);
            return head;
        }
        catch (Exception ex) when (ex is InvalidDataException or Http1HeadTooLargeException)
        {
            input.AdvanceTo(result.Buffer.Start, result.Buffer.End);
            if (ex is InvalidDataException)
            {
                throw;
            }

            throw new InvalidDataException($"The backend's response head exceeds {MaxHeadBytes} bytes.", ex);
        }
    }

    /// <summary>The backend closed the connection before a whole head: fine only when it had sent nothing at all.</summary>
    private static void ThrowIfEndedInsideAnswer(in ReadOnlySequence<byte> buffer, bool interim)
    {
        if (buffer.IsEmpty && !interim)
        {
            return;
        }

        if (buffer.IsEmpty)
        {
            // Not "closed before a byte", which a caller may take as an idle close and safe to try again: the
            // backend saw the request and began to answer (found by the response-head fuzzer).
            throw new IOException("The backend closed the connection after an interim response, before the final one.");
        }

        throw new IOException("The backend closed the connection inside the response head.");
    }

    /// <summary>Awaits a read started without a token, cancelling it (as a pipe read is cancelled) when the exchange is.</summary>
    private static async ValueTask<ReadResult> FinishReadAheadAsync(PipeReader input, ValueTask<ReadResult> pending, CancellationToken cancellationToken)
    {
        if (!cancellationToken.CanBeCanceled)
        {
            return await pending;
        }

        using (cancellationToken.UnsafeRegister(static state => ((PipeReader)state!).CancelPendingRead(), input))
        {
            return await pending;
        }
    }

    private static BackendResponseHead Parse(Http1Head head, bool isHeadRequest, bool upgradeRequested)
    {
        int status = ParseStatusLine(head.StartLine, out bool http10);
        bool switching = status == SwitchingProtocols;
        if (switching && !upgradeRequested)
        {
            // RFC 9110 §15.2.2: a server switches only when asked; bytes after such a head belong to no protocol we speak.
            throw new InvalidDataException("The backend answered 101 Switching Protocols to a request that asked for no upgrade.");
        }

        // The head's own list becomes the response's.
        List<HeaderField> headers = head.Fields;
        FramingFields framing = TakeFramingFields(headers, switching);
        if (headers.Count > HeadCodec.MaxHeaderCount)
        {
            // The server reads a response head with more fields as a protocol error and drops the whole uplink: this
            // exchange fails here instead (a 502), and the uplink's other streams go on.
            throw new InvalidDataException($"The backend's response head has {headers.Count} fields; at most {HeadCodec.MaxHeaderCount} cross the tunnel.");
        }

        if (switching)
        {
            // What follows the head is the new protocol's, not a body: no framing field passes, and the connection is its.
            headers.RemoveAll(field => field.Name.Equals("Content-Length", StringComparison.OrdinalIgnoreCase));
            return new BackendResponseHead(status, headers, BodyFraming.None, 0, Http1.CloseCause.Upgraded);
        }

        return Frame(status, http10, headers, framing, isHeadRequest);
    }

    /// <summary>The status of <c>HTTP/1.x NNN …</c>.</summary>
    private static int ParseStatusLine(string statusLine, out bool http10)
    {
        // A status below 100 is not HTTP (RFC 9110 §15), and the head codec cannot carry it: the server would drop the
        // whole uplink as a protocol error. Found by fuzzing (fuzz/Tunnel2.Fuzz, target response-head).
        if (statusLine.Length < 12 || !statusLine.StartsWith("HTTP/1.", StringComparison.Ordinal) || !char.IsAsciiDigit(statusLine[7])
            || statusLine[8] != ' ' || !int.TryParse(statusLine.AsSpan(9, 3), NumberStyles.None, CultureInfo.InvariantCulture, out int status)
            || status < 100)
        {
            throw new InvalidDataException($"The backend did not answer with HTTP/1.x: '{statusLine}'.");
        }

        http10 = statusLine[7] == '0';
        return status;
    }

    /// <summary>
    /// Takes the framing fields and the hop-by-hop ones (and those <c>Connection</c> names) out of the head's fields,
    /// moving the fields that pass down over the ones dropped; keeps the first of equal <c>Content-Length</c> fields.
    /// </summary>
    private static FramingFields TakeFramingFields(List<HeaderField> headers, bool switching)
    {
        int kept = 0;
        var framing = new FramingFields(null, null, -1);
        for (int i = 0; i < headers.Count; i++)
        {
            HeaderField field = headers[i];
            (string name, string value) = field;
            if (name.Equals("Content-Length", StringComparison.OrdinalIgnoreCase))
            {
                if (IsRepeatedLength(value, ref framing.ContentLength))
                {
                    continue;
                }
            }
            else if (name.Equals("Transfer-Encoding", StringComparison.OrdinalIgnoreCase))
            {
                framing.TransferEncoding = framing.TransferEncoding is null ? value : framing.TransferEncoding + "," + value;
                continue;
            }
            else if (name.Equals("Connection", StringComparison.OrdinalIgnoreCase))
            {
                framing.Connection = framing.Connection is null ? value : framing.Connection + "," + value;
                continue;
            }
            else if (HopByHopHeaders.Contains(name) && !IsSwitchedProtocol(name, switching))
            {
                continue;
            }

            headers[kept++] = field;
        }

        headers.RemoveRange(kept, headers.Count - kept);
        if (framing.Connection is { } connection)
        {
            headers.RemoveAll(field => HttpSyntax.ListsToken(connection, field.Name) && !IsSwitchedProtocol(field.Name, switching));
        }

        return framing;
    }

    /// <summary>Reads a <c>Content-Length</c> value into <paramref name="contentLength"/>; true for a repeat of the one already read.</summary>
    private static bool IsRepeatedLength(string value, ref long contentLength)
    {
        if (!long.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out long length))
        {
            throw new InvalidDataException($"Invalid Content-Length '{value}'.");
        }

        if (contentLength < 0)
        {
            contentLength = length;
            return false;
        }

        // A repeat with the same value is harmless (RFC 9110 §8.6); two lengths are two framings.
        if (length != contentLength)
        {
            throw new InvalidDataException($"Conflicting Content-Length values {contentLength} and {length}.");
        }

        return true;
    }

    /// <summary>How the body of a final (or non-101) answer is framed, and whether the connection may carry another exchange.</summary>
    private static BackendResponseHead Frame(int status, bool http10, List<HeaderField> headers, FramingFields fields, bool isHeadRequest)
    {
        // RFC 9112 §6.3: Transfer-Encoding overrides Content-Length, whose field is not passed on; chunked as the final
        // coding frames the body, any other final coding means the body runs until the connection closes. 204 never
        // carries Content-Length (RFC 9110 §8.6), and Kestrel refuses to send one.
        string? transferEncoding = fields.TransferEncoding;
        long contentLength = fields.ContentLength;
        bool chunked = transferEncoding is not null && FinalCodingIsChunked(transferEncoding);
        if (transferEncoding is not null || status == 204)
        {
            headers.RemoveAll(field => field.Name.Equals("Content-Length", StringComparison.OrdinalIgnoreCase));
        }

        BodyFraming framing = isHeadRequest || status is 204 or 304 || status < 200 ? BodyFraming.None
            : transferEncoding is not null ? (chunked ? BodyFraming.Chunked : BodyFraming.UntilClose)
            : contentLength >= 0 ? (contentLength == 0 ? BodyFraming.None : BodyFraming.ContentLength)
            : BodyFraming.UntilClose;
        bool keepAlive = http10 ? HttpSyntax.ListsToken(fields.Connection, "keep-alive") : !HttpSyntax.ListsToken(fields.Connection, "close");
        CloseCause? closeCause = transferEncoding is not null && contentLength >= 0 ? Http1.CloseCause.LengthAndTransferEncoding
            : framing == BodyFraming.UntilClose ? Http1.CloseCause.ReadUntilClose
            : !keepAlive ? Http1.CloseCause.ConnectionClose
            : null;
        return new BackendResponseHead(status, headers, framing, Math.Max(0, contentLength), closeCause);
    }

    /// <summary>A 101's <c>Upgrade</c> field names the protocol switched to: the caller's side needs it in its own 101.</summary>
    private static bool IsSwitchedProtocol(string name, bool switching) =>
        switching && name.Equals("Upgrade", StringComparison.OrdinalIgnoreCase);

    private static bool FinalCodingIsChunked(string transferEncoding)
    {
        int lastComma = transferEncoding.LastIndexOf(',');
        return transferEncoding.AsSpan(lastComma + 1).Trim().Equals("chunked", StringComparison.OrdinalIgnoreCase);
    }

    /// <summary>The fields that decide the framing and the connection's reuse, as the head gave them.</summary>
    private struct FramingFields(string? connection, string? transferEncoding, long contentLength)
    {
        public string? Connection = connection;
        public string? TransferEncoding = transferEncoding;

        /// <summary>-1 without a <c>Content-Length</c>.</summary>
        public long ContentLength = contentLength;
    }
}
