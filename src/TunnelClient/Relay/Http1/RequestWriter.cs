using System.Buffers;
using System.IO.Pipelines;
using System.Text;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.TunnelClient.Relay.Http1;

/// <summary>Writes a request head to the backend in HTTP/1.1 framing (its body goes with <see cref="IHttpExchange.CopyInputToAsync(PipeWriter, bool, CancellationToken)"/>).</summary>
internal static class RequestWriter
{
    private static readonly SearchValues<char> TargetBreakers = SearchValues.Create(" \t\r\n\0");

    private static ReadOnlySpan<byte> CrLf => "\r\n"u8;

    /// <summary>
    /// Writes the request line and headers; returns true when the body must go chunked (no Content-Length). An upgrade
    /// request (<paramref name="upgrade"/>) gets <c>Connection: Upgrade</c> beside its <c>Upgrade</c> field and no body framing.
    /// </summary>
    /// <param name="host">The <c>Host</c> line (<see cref="Shaping.HostHeaderPolicy"/>); a Host field in the head is ignored.</param>
    /// <exception cref="InvalidDataException">
    /// A method, target or header that would change how the backend frames the request (a name outside RFC 9110's
    /// token characters, CR/LF/NUL in a value, white space in the target): nothing is written then. The public edge
    /// refuses such requests already; this keeps a non-conforming server from smuggling one through.
    /// </exception>
    public static bool WriteHead(PipeWriter output, RequestHead head, string host, bool hasBody, bool upgrade = false)
    {
        Validate(head);
        WriteText(output, head.Method);
        output.Write(" "u8);
        WriteText(output, head.Target);
        output.Write(" HTTP/1.1\r\nHost: "u8);
        WriteText(output, host);
        output.Write(CrLf);
        bool hasLength = false;
        foreach (HeaderField field in head.Headers)
        {
            if (field.Name.Equals("Host", StringComparison.OrdinalIgnoreCase)
                || field.Name.Equals("Transfer-Encoding", StringComparison.OrdinalIgnoreCase))
            {
                continue;
            }

            hasLength |= field.Name.Equals("Content-Length", StringComparison.OrdinalIgnoreCase);
            WriteText(output, field.Name);
            output.Write(": "u8);
            WriteText(output, field.Value);
            output.Write(CrLf);
        }

        if (upgrade)
        {
            output.Write("Connection: Upgrade\r\n"u8);
        }

        bool chunked = hasBody && !upgrade && !hasLength;
        if (chunked)
        {
            output.Write("Transfer-Encoding: chunked\r\n"u8);
        }

        output.Write(CrLf);
        return chunked;
    }

    private static void Validate(RequestHead head)
    {
        if (!HttpSyntax.IsToken(head.Method))
        {
            throw new InvalidDataException("The request method is not an RFC 9110 token.");
        }

        if (head.Target.Length == 0 || head.Target[0] != '/' || head.Target.AsSpan().ContainsAny(TargetBreakers))
        {
            throw new InvalidDataException("The request target is not origin-form without white space or controls.");
        }

        foreach (HeaderField field in head.Headers)
        {
            if (!HttpSyntax.IsToken(field.Name))
            {
                throw new InvalidDataException("A header name holds a character outside RFC 9110 token.");
            }

            if (!HttpSyntax.IsSafeFieldValue(field.Value))
            {
                throw new InvalidDataException($"The value of header '{field.Name}' holds CR, LF or NUL.");
            }
        }
    }

    private static void WriteText(PipeWriter output, string text)
    {
        Span<byte> span = output.GetSpan(Encoding.UTF8.GetMaxByteCount(text.Length));
        output.Advance(Encoding.UTF8.GetBytes(text, span));
    }
}
