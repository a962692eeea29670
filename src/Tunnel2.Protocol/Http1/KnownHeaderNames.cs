namespace Tunnel2.Protocol.Http1;

/// <summary>
/// The header names most answers carry, as shared strings: a head that spells one exactly as here gets the shared
/// string instead of a new one per response (as Kestrel does for its known headers). Any other spelling is kept as sent.
/// </summary>
internal static class KnownHeaderNames
{
    private static readonly (byte[] Bytes, string Name)[] Names = Build(
        "Date", "Vary", "ETag", "Server", "Expires", "Location", "Connection", "Set-Cookie", "Keep-Alive",
        "Content-Type", "Accept-Ranges", "Cache-Control", "Last-Modified", "Content-Length", "Content-Encoding",
        "Transfer-Encoding");

    public static string? Get(ReadOnlySpan<byte> name)
    {
        foreach ((byte[] bytes, string known) in Names)
        {
            if (bytes.Length == name.Length && name.SequenceEqual(bytes))
            {
                return known;
            }
        }

        return null;
    }

    private static (byte[], string)[] Build(params string[] names)
    {
        var table = new (byte[], string)[names.Length];
        for (int i = 0; i < names.Length; i++)
        {
            table[i] = (System.Text.Encoding.ASCII.GetBytes(names[i]), names[i]);
        }

        return table;
    }
}
