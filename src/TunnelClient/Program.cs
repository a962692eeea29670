using Microsoft.Extensions.Options;
using Tunnel2.TunnelClient;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.Uplinks;

if (CommandLine.WantsHelp(args))
{
    Console.WriteLine(CommandLine.HelpText);
    return 0;
}

try
{
    IHost host = TunnelClientApp.Create(args);
    TunnelClientStatus status = host.Services.GetRequiredService<TunnelClientStatus>();
    await host.RunAsync(); // disposes the host
    return status.ExitCode;
}
catch (InvalidOperationException ex) when (ex.Message.Contains("configuration", StringComparison.OrdinalIgnoreCase))
{
    Console.Error.WriteLine($"TunnelClient: invalid configuration: {ex.Message}");
    Console.Error.WriteLine("Run with --help for the options.");
    return 2;
}
catch (OptionsValidationException ex)
{
    Console.Error.WriteLine("TunnelClient: invalid configuration:");
    foreach (string failure in ex.Failures)
    {
        Console.Error.WriteLine($"  - {failure}");
    }

    Console.Error.WriteLine("Run with --help for the options.");
    return 2;
}
