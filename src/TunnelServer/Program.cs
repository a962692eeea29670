using Tunnel2.Hosting;
using Tunnel2.TunnelServer;
using Tunnel2.TunnelServer.Configuration;
using Tunnel2.TunnelServer.Security;

if (HashCommand.IsCommand(args))
{
    return HashCommand.Run(args, Console.In, Console.Out, Console.Error);
}

return await ProgramHost.RunAsync("TunnelServer", args, CommandLine.Help, CommandLine.Spec, TunnelServerApp.Create);
