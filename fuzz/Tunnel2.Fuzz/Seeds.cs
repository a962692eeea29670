using System.Buffers;
using System.Text;
using Tunnel2.Protocol.Heads;

namespace Tunnel2.Fuzz;

/// <summary>Writes the seed corpus (<c>corpus/head</c>, <c>corpus/response-head</c>): a few well-formed inputs per parser.</summary>
internal static class Seeds
{
    public static void Write(string directory)
    {
        string head = Directory.CreateDirectory(Path.Combine(directory, "head")).FullName;
        string response = Directory.CreateDirectory(Path.Combine(directory, "response-head")).FullName;
        List<HeaderField> fields = [new("Host", "example.test"), new("Content-Length", "5"), new("X-Forwarded-Prefix", "/session/s-1")];

        var writer = new ArrayBufferWriter<byte>();
        writer.Write([(byte)0]);
        HeadCodec.WriteRequestHead(writer, new RequestHead("POST", "/upload?x=1", fields));
        File.WriteAllBytes(Path.Combine(head, "request-post"), writer.WrittenSpan.ToArray());

        writer = new ArrayBufferWriter<byte>();
        writer.Write([(byte)0]);
        HeadCodec.WriteRequestHead(writer, new RequestHead("PROPFIND", "/", []));
        File.WriteAllBytes(Path.Combine(head, "request-unknown-method"), writer.WrittenSpan.ToArray());

        writer = new ArrayBufferWriter<byte>();
        writer.Write([(byte)1]);
        HeadCodec.WriteResponseHead(writer, new ResponseHead(200, [new("Content-Type", "text/plain"), new("Set-Cookie", "a=1"), new("Set-Cookie", "b=2")]));
        File.WriteAllBytes(Path.Combine(head, "response-200"), writer.WrittenSpan.ToArray());

        File.WriteAllBytes(Path.Combine(head, "http1-request"), Text(2, "GET /a HTTP/1.1\r\nHost: x\r\nUpgrade: tunnel2\r\n\r\nrest"));
        File.WriteAllBytes(Path.Combine(head, "http1-split"), Text(5, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n\r\n"));

        File.WriteAllBytes(Path.Combine(response, "length"), Text(0, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello"));
        File.WriteAllBytes(Path.Combine(response, "chunked"), Text(0, "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nConnection: keep-alive, X-A\r\nX-A: 1\r\n\r\n5\r\nhello\r\n0\r\n\r\n"));
        File.WriteAllBytes(Path.Combine(response, "continue-then-204"), Text(4, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\nContent-Length: 3\r\n\r\n"));
        File.WriteAllBytes(Path.Combine(response, "head-304"), Text(1, "HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\nContent-Length: 42\r\n\r\n"));
        File.WriteAllBytes(Path.Combine(response, "http10-keep-alive"), Text(8, "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n"));
        File.WriteAllBytes(Path.Combine(response, "upgrade-101"), Text(2, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"));
    }

    private static byte[] Text(byte first, string text) => [first, .. Encoding.Latin1.GetBytes(text)];
}
