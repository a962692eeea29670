using System.Buffers;
using System.Globalization;
using System.Text;
using Microsoft.AspNetCore.WebUtilities;
using Tunnel2.Hosting;
using Tunnel2.Protocol.Handshake;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Problems;

namespace Tunnel2.TunnelServer.Uplinks.Handshake;

/// <summary>The server's side of the upgrade, as bytes: <c>101 Switching Protocols</c> with the negotiated settings, or a refusal.</summary>
public static class HandshakeAnswer
{
    /// <summary>The 101 that switches the connection to frames (or to WebSocket messages carrying them).</summary>
    /// <param name="publicUrl">Where callers reach the session (<see cref="PublicSessionUrl"/>).</param>
    /// <param name="tcpAddress">Where callers reach the session's TCP port (<c>Tunnel2-Tcp-Address</c>), for a TCP login.</param>
    public static byte[] SwitchingProtocols(HandshakeAcceptance accepted, UplinkSettings settings, string publicUrl, string? tcpAddress = null)
    {
        var head = new StringBuilder(512).Append("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n");
        if (accepted.WebSocketKey is { } key)
        {
            head.Append("Upgrade: websocket\r\n")
                .Append(CultureInfo.InvariantCulture, $"Sec-WebSocket-Accept: {WebSocketKeys.Accept(key)}\r\n");
        }
        else
        {
            head.Append(CultureInfo.InvariantCulture, $"Upgrade: {HandshakeProtocol.UpgradeToken}\r\n");
        }

        head.Append(CultureInfo.InvariantCulture, $"{HandshakeProtocol.VersionHeader}: {accepted.Version}\r\n")
            .Append(CultureInfo.InvariantCulture, $"{HandshakeProtocol.MaxFramePayloadHeader}: {settings.MaxFramePayload}\r\n")
            .Append(CultureInfo.InvariantCulture, $"{HandshakeProtocol.InitialWindowHeader}: {settings.InitialStreamWindow}\r\n")
            .Append(CultureInfo.InvariantCulture, $"{HandshakeProtocol.ConnectionWindowHeader}: {settings.ConnectionWindow}\r\n")
            .Append(CultureInfo.InvariantCulture, $"{HandshakeProtocol.MaxStreamsHeader}: {settings.MaxConcurrentStreams}\r\n")
            .Append(CultureInfo.InvariantCulture, $"{HandshakeProtocol.PublicUrlHeader}: {publicUrl}\r\n");
        if (tcpAddress is not null)
        {
            head.Append(CultureInfo.InvariantCulture, $"{HandshakeProtocol.TcpAddressHeader}: {tcpAddress}\r\n");
        }

        head.Append("\r\n");
        return Encoding.ASCII.GetBytes(head.ToString());
    }

    /// <summary>A refusal as RFC 9457 problem details; the server closes the connection after it.</summary>
    public static byte[] Refusal(HandshakeRefusal refusal, string instance)
    {
        var body = new ArrayBufferWriter<byte>(256);
        ProblemResponse.WriteBody(body, refusal.Status, ProblemTypes.ForReason(refusal.Reason), refusal.Title, refusal.Detail, instance);

        var head = new StringBuilder(512)
            .Append(CultureInfo.InvariantCulture, $"HTTP/1.1 {refusal.Status} {ReasonPhrases.GetReasonPhrase(refusal.Status)}\r\n")
            .Append(CultureInfo.InvariantCulture, $"Content-Type: {ProblemResponse.ContentType}\r\n")
            .Append("Cache-Control: no-store\r\n")
            .Append(CultureInfo.InvariantCulture, $"{HandshakeProtocol.ProblemHeader}: {refusal.Reason}\r\n")
            .Append(CultureInfo.InvariantCulture, $"Date: {DateTimeOffset.UtcNow:R}\r\n");
        bool closes = true;
        foreach (KeyValuePair<string, string> header in refusal.Headers)
        {
            head.Append(CultureInfo.InvariantCulture, $"{header.Key}: {header.Value}\r\n");
            closes &= !header.Key.Equals("Connection", StringComparison.OrdinalIgnoreCase);
        }

        if (closes)
        {
            head.Append("Connection: close\r\n");
        }

        head.Append(CultureInfo.InvariantCulture, $"Content-Length: {body.WrittenCount}\r\n\r\n");
        byte[] headBytes = Encoding.ASCII.GetBytes(head.ToString());
        byte[] answer = new byte[headBytes.Length + body.WrittenCount];
        headBytes.CopyTo(answer, 0);
        body.WrittenSpan.CopyTo(answer.AsSpan(headBytes.Length));
        return answer;
    }
}
