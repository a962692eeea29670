using Tunnel2.TestBackend.Diagnostics;
using Tunnel2.TestBackend.Http;

namespace Tunnel2.TestBackend.Endpoints;

internal sealed class StatsEndpoint(DelayStatistics statistics)
{
    public Task HandleAsync(HttpContext context) =>
        JsonBody.WriteAsync(context.Response, ContentTypes.Json, statistics, static (writer, stats) =>
        {
            writer.WriteStartObject();
            writer.WriteNumber("activeWaits", stats.ActiveWaits);
            writer.WriteNumber("peakActiveWaits", stats.PeakActiveWaits);
            writer.WriteNumber("completedWaits", stats.CompletedWaits);
            writer.WriteNumber("cancelledWaits", stats.CancelledWaits);
            writer.WriteEndObject();
        });
}
