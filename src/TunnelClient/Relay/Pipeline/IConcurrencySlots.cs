namespace Tunnel2.TunnelClient.Relay.Pipeline;

/// <summary>
/// Where an exchange's concurrency slot goes back: the admission step that gave it (<c>RelayAdmission</c>). The exchange
/// holds it (<see cref="RelayExchange.HoldSlot"/>) until its response head is out or the admission step sees it end,
/// whichever comes first, and gives it back once.
/// </summary>
internal interface IConcurrencySlots
{
    /// <summary>Gives one slot back.</summary>
    void Release();
}
