using Tunnel2.Hosting;
using Tunnel2.TunnelServer;
using Tunnel2.TunnelServer.Configuration;

return await ProgramHost.RunAsync("TunnelServer", args, CommandLine.HelpText, CommandLine.Spec, TunnelServerApp.Create);
