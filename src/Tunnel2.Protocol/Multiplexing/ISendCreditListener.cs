namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// Told once that a stream has send credit again (or failed), on the thread that granted it (usually the uplink's
/// reader): the owner posts itself to where it sends (an event loop) and takes the credit there. It must not block.
/// </summary>
public interface ISendCreditListener
{
    void OnSendCredit();
}
