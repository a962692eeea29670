using System.Globalization;

namespace Tunnel2.TunnelClient.Relay.Http1;

/// <summary>
/// Where a chunked body is (RFC 9112 §7.1): inside a chunk's data, at the CRLF after it, at a size line, or in the
/// trailers after the last chunk. <see cref="ResponseBodyPump"/> feeds it the lines and the data it passes on.
/// </summary>
internal struct ChunkedFraming
{
    private bool _expectChunkEnd;
    private bool _inTrailers;

    /// <summary>Bytes of the current chunk's data still to come.</summary>
    public long DataRemaining { get; private set; }

    /// <summary>Some of the current chunk's data went up.</summary>
    public void OnData(long length)
    {
        DataRemaining -= length;
        _expectChunkEnd = DataRemaining == 0;
    }

    /// <summary>One line outside chunk data; true at the empty line that ends the trailers, and so the body.</summary>
    /// <exception cref="InvalidDataException">A chunk not followed by CRLF, or a size that is not hexadecimal.</exception>
    public bool OnLine(string line)
    {
        if (_expectChunkEnd)
        {
            if (line.Length != 0)
            {
                throw new InvalidDataException("Missing CRLF after a chunk.");
            }

            _expectChunkEnd = false;
            return false;
        }

        if (_inTrailers)
        {
            return line.Length == 0;
        }

        int extension = line.IndexOf(';', StringComparison.Ordinal);
        string size = (extension < 0 ? line : line[..extension]).Trim();
        if (!long.TryParse(size, NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out long chunkSize) || chunkSize < 0)
        {
            throw new InvalidDataException($"Invalid chunk size '{size}'.");
        }

        DataRemaining = chunkSize;
        _inTrailers = chunkSize == 0;
        return false;
    }
}
