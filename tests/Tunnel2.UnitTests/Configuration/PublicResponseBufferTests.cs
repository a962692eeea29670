using System.ComponentModel.DataAnnotations;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.AspNetCore.Server.Kestrel.Transport.Sockets;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Tunnel2.TunnelServer;
using Tunnel2.TunnelServer.Configuration;

namespace Tunnel2.UnitTests.Configuration;

/// <summary>TunnelServer:Listeners:PublicResponseBuffer reaches both of Kestrel's response limits, and is range-checked.</summary>
public sealed class PublicResponseBufferTests
{
    [Theory]
    [InlineData(null, 64 * 1024)]
    [InlineData("1048576", 1024 * 1024)]
    public void The_server_sets_the_transport_and_Kestrel_limits_to_it(string? setting, int expected)
    {
        string[] args = setting is null
            ? ["--TunnelServer:Token=12345678"]
            : ["--TunnelServer:Token=12345678", $"--TunnelServer:Listeners:PublicResponseBuffer={setting}"];
        using WebApplication app = TunnelServerApp.Create(args);

        Assert.Equal(expected, app.Services.GetRequiredService<IOptions<SocketTransportOptions>>().Value.MaxWriteBufferSize);
        Assert.Equal(expected, app.Services.GetRequiredService<IOptions<KestrelServerOptions>>().Value.Limits.MaxResponseBufferSize);
    }

    [Theory]
    [InlineData(16 * 1024 - 1, false)]
    [InlineData(16 * 1024, true)]
    [InlineData(64 * 1024 * 1024, true)]
    [InlineData(64 * 1024 * 1024 + 1, false)]
    public void It_is_range_checked(int bytes, bool valid)
    {
        var options = new ServerListenersOptions { PublicResponseBuffer = bytes };
        var results = new List<ValidationResult>();

        Assert.Equal(valid, Validator.TryValidateObject(options, new ValidationContext(options), results, validateAllProperties: true));
    }
}
