using Microsoft.Extensions.Options;
using Tunnel2.TunnelServer;
using Tunnel2.TunnelServer.Configuration;

if (CommandLine.WantsHelp(args))
{
    Console.WriteLine(CommandLine.HelpText);
    return 0;
}

WebApplication app;
try
{
    app = TunnelServerApp.Create(args);
}
catch (OptionsValidationException ex)
{
    Console.Error.WriteLine("TunnelServer: invalid configuration:");
    foreach (string failure in ex.Failures)
    {
        Console.Error.WriteLine($"  - {failure}");
    }

    Console.Error.WriteLine("Run with --help for the options.");
    return 2;
}

await app.RunAsync();
return 0;
