namespace Tunnel2.Protocol.Multiplexing;

/// <summary>Told by an <see cref="ISendProgress"/> that the bytes it was asked about have been sent.</summary>
public interface ISendProgressListener
{
    /// <param name="source">The destination that sent them.</param>
    /// <param name="sent">Every byte it has sent so far (at least the mark asked for).</param>
    void OnSent(ISendProgress source, long sent);
}
