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
    using IHost host = TunnelClientApp.Create(args);
    await host.RunAsync();
    return host.Services.GetRequiredService<TunnelClientStatus>().ExitCode;
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
