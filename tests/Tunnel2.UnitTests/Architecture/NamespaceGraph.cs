using System.Reflection;
using System.Reflection.Emit;

namespace Tunnel2.UnitTests.Architecture;

/// <summary>
/// The graph of namespace dependencies inside compiled assemblies: an edge A → B when a type of namespace A names a
/// type of namespace B in its base type, interfaces, fields, signatures, locals, attributes or method bodies (read
/// from the IL, so a fully qualified name or a parent namespace counts as much as a <c>using</c> line).
/// </summary>
internal static class NamespaceGraph
{
    private const BindingFlags Declared =
        BindingFlags.DeclaredOnly | BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Instance | BindingFlags.Static;

    private static readonly Dictionary<short, OpCode> OpCodesByValue = typeof(OpCodes)
        .GetFields(BindingFlags.Public | BindingFlags.Static)
        .Select(field => (OpCode)field.GetValue(null)!)
        .ToDictionary(code => code.Value);

    /// <summary>Edges between the namespaces that start with <paramref name="prefix"/>, self-edges left out.</summary>
    public static Dictionary<string, SortedSet<string>> Of(Assembly assembly, string prefix) => Of(Causes(assembly, prefix).Keys);

    /// <summary>The adjacency sets of a list of edges.</summary>
    public static Dictionary<string, SortedSet<string>> Of(IEnumerable<(string From, string To)> pairs)
    {
        Dictionary<string, SortedSet<string>> edges = new(StringComparer.Ordinal);
        foreach ((string from, string to) in pairs)
        {
            (edges.TryGetValue(from, out SortedSet<string>? targets) ? targets : edges[from] = new(StringComparer.Ordinal)).Add(to);
        }

        return edges;
    }

    /// <summary>For each edge, the types of its source namespace that make it (nested and generated types by their outer type).</summary>
    public static Dictionary<(string From, string To), SortedSet<string>> Causes(Assembly assembly, string prefix)
    {
        Dictionary<(string, string), SortedSet<string>> causes = [];
        foreach (Type type in assembly.GetTypes())
        {
            if (type.Namespace is not { } from || !from.StartsWith(prefix, StringComparison.Ordinal))
            {
                continue;
            }

            SortedSet<string> targets = new(StringComparer.Ordinal);
            foreach (Type used in Referenced(type))
            {
                AddNamespaces(used, targets);
            }

            Type outer = type;
            while (outer.DeclaringType is { } declaring)
            {
                outer = declaring;
            }

            foreach (string to in targets.Where(to => to != from && to.StartsWith(prefix, StringComparison.Ordinal)))
            {
                (causes.TryGetValue((from, to), out SortedSet<string>? types) ? types : causes[(from, to)] = new(StringComparer.Ordinal)).Add(outer.Name);
            }
        }

        return causes;
    }

    /// <summary>The strongly connected components with more than one namespace: each is a cycle (or a knot of them).</summary>
    public static List<SortedSet<string>> Cycles(IReadOnlyDictionary<string, SortedSet<string>> edges)
    {
        // Tarjan's algorithm.
        Dictionary<string, int> index = new(StringComparer.Ordinal);
        Dictionary<string, int> low = new(StringComparer.Ordinal);
        Stack<string> stack = new();
        HashSet<string> onStack = new(StringComparer.Ordinal);
        List<SortedSet<string>> components = [];

        void Visit(string node)
        {
            index[node] = low[node] = index.Count;
            stack.Push(node);
            onStack.Add(node);
            foreach (string next in edges.TryGetValue(node, out SortedSet<string>? targets) ? targets : [])
            {
                if (!index.TryGetValue(next, out int seen))
                {
                    Visit(next);
                    low[node] = Math.Min(low[node], low[next]);
                }
                else if (onStack.Contains(next))
                {
                    low[node] = Math.Min(low[node], seen);
                }
            }

            if (low[node] == index[node])
            {
                SortedSet<string> component = new(StringComparer.Ordinal);
                string member;
                do
                {
                    member = stack.Pop();
                    onStack.Remove(member);
                    component.Add(member);
                }
                while (member != node);

                if (component.Count > 1)
                {
                    components.Add(component);
                }
            }
        }

        foreach (string node in edges.Keys.Order(StringComparer.Ordinal))
        {
            if (!index.ContainsKey(node))
            {
                Visit(node);
            }
        }

        return components;
    }

    private static IEnumerable<Type> Referenced(Type type)
    {
        if (type.BaseType is { } baseType)
        {
            yield return baseType;
        }

        foreach (Type contract in type.GetInterfaces())
        {
            yield return contract;
        }

        foreach (Type attribute in AttributeTypes(type.GetCustomAttributesData()))
        {
            yield return attribute;
        }

        foreach (FieldInfo field in type.GetFields(Declared))
        {
            yield return field.FieldType;
            foreach (Type attribute in AttributeTypes(field.GetCustomAttributesData()))
            {
                yield return attribute;
            }
        }

        foreach (PropertyInfo property in type.GetProperties(Declared))
        {
            yield return property.PropertyType;
            foreach (Type attribute in AttributeTypes(property.GetCustomAttributesData()))
            {
                yield return attribute;
            }
        }

        foreach (EventInfo handler in type.GetEvents(Declared))
        {
            if (handler.EventHandlerType is { } handlerType)
            {
                yield return handlerType;
            }
        }

        IEnumerable<MethodBase> methods = type.GetMethods(Declared).Cast<MethodBase>().Concat(type.GetConstructors(Declared));
        foreach (MethodBase method in methods)
        {
            foreach (Type used in InMethod(type, method))
            {
                yield return used;
            }
        }
    }

    private static IEnumerable<Type> InMethod(Type owner, MethodBase method)
    {
        if (method is MethodInfo { ReturnType: var returnType })
        {
            yield return returnType;
        }

        foreach (ParameterInfo parameter in method.GetParameters())
        {
            yield return parameter.ParameterType;
        }

        foreach (Type attribute in AttributeTypes(method.GetCustomAttributesData()))
        {
            yield return attribute;
        }

        if (method.GetMethodBody() is not { } body)
        {
            yield break;
        }

        foreach (LocalVariableInfo local in body.LocalVariables)
        {
            yield return local.LocalType;
        }

        Type[]? typeArguments = owner.IsGenericType ? owner.GetGenericArguments() : null;
        Type[]? methodArguments = method.IsGenericMethod ? method.GetGenericArguments() : null;
        foreach (int token in Tokens(body.GetILAsByteArray() ?? []))
        {
            MemberInfo? member;
            try
            {
                member = method.Module.ResolveMember(token, typeArguments, methodArguments);
            }
            catch (ArgumentException)
            {
                continue;
            }

            switch (member)
            {
                case Type used:
                    yield return used;
                    break;
                case MethodInfo { IsGenericMethod: true } called:
                    yield return called.DeclaringType!;
                    foreach (Type argument in called.GetGenericArguments())
                    {
                        yield return argument;
                    }

                    break;
                case { DeclaringType: { } declaring }:
                    yield return declaring;
                    break;
            }
        }
    }

    /// <summary>The metadata tokens that IL instructions name (types, methods, fields), read by walking the opcodes.</summary>
    private static IEnumerable<int> Tokens(byte[] il)
    {
        int at = 0;
        while (at < il.Length)
        {
            short value = il[at++];
            if (value == 0xFE)
            {
                value = (short)(0xFE00 | il[at++]);
            }

            OpCode code = OpCodesByValue[value];
            switch (code.OperandType)
            {
                case OperandType.InlineType or OperandType.InlineMethod or OperandType.InlineField or OperandType.InlineTok:
                    yield return BitConverter.ToInt32(il, at);
                    at += 4;
                    break;
                case OperandType.InlineNone:
                    break;
                case OperandType.ShortInlineBrTarget or OperandType.ShortInlineI or OperandType.ShortInlineVar:
                    at += 1;
                    break;
                case OperandType.InlineVar:
                    at += 2;
                    break;
                case OperandType.InlineI8 or OperandType.InlineR:
                    at += 8;
                    break;
                case OperandType.InlineSwitch:
                    at += 4 + (4 * BitConverter.ToInt32(il, at));
                    break;
                default:
                    at += 4;
                    break;
            }
        }
    }

    private static IEnumerable<Type> AttributeTypes(IEnumerable<CustomAttributeData> attributes)
    {
        foreach (CustomAttributeData attribute in attributes)
        {
            yield return attribute.AttributeType;
            foreach (CustomAttributeTypedArgument argument in attribute.ConstructorArguments)
            {
                if (argument.Value is Type named)
                {
                    yield return named;
                }
            }
        }
    }

    private static void AddNamespaces(Type type, ISet<string> into)
    {
        if (type.HasElementType)
        {
            AddNamespaces(type.GetElementType()!, into);
            return;
        }

        if (type.IsGenericParameter)
        {
            return;
        }

        if (type.Namespace is { } name)
        {
            into.Add(name);
        }

        if (type.IsConstructedGenericType)
        {
            foreach (Type argument in type.GetGenericArguments())
            {
                AddNamespaces(argument, into);
            }
        }
    }
}
