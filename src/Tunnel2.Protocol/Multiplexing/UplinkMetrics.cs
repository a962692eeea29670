using System.Diagnostics.Metrics;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// Meter <c>Tunnel2.Uplink</c>: frames and bytes each way over every uplink of the process. Counted once per socket read
/// and once per flush, not per frame, so an exporter that listens costs two counter steps per batch; without one the
/// instruments are disabled and cost a branch.
/// </summary>
public static class UplinkMetrics
{
    public const string MeterName = "Tunnel2.Uplink";

    private static readonly Meter Meter = new(MeterName);

    private static readonly Counter<long> Frames = Meter.CreateCounter<long>("tunnel2.uplink.frames", "{frame}",
        "Frames over the uplinks, by direction (received, sent)");

    private static readonly Counter<long> Bytes = Meter.CreateCounter<long>("tunnel2.uplink.bytes", "By",
        "Bytes of frames over the uplinks (headers and payloads), by direction (received, sent)");

    private static readonly KeyValuePair<string, object?> ReceivedTag = new("network.io.direction", "receive");
    private static readonly KeyValuePair<string, object?> SentTag = new("network.io.direction", "transmit");

    public static void Received(int frames, long bytes)
    {
        if (Frames.Enabled)
        {
            Frames.Add(frames, ReceivedTag);
            Bytes.Add(bytes, ReceivedTag);
        }
    }

    public static void Sent(int frames, long bytes)
    {
        if (Frames.Enabled)
        {
            Frames.Add(frames, SentTag);
            Bytes.Add(bytes, SentTag);
        }
    }
}
