/**
 * `withFlights(client, options)`: the official OpenAI client whose `chat.completions.create`,
 * `responses.create` and `embeddings.create` are made once across the cluster; every other property and
 * method is the client's own. The wrapped client has the client's type: pass it wherever an `OpenAI` goes.
 */
import { FlightConfigurationError } from '@flight/core';
import { APIS, type ApiSpec } from './apis.js';
import { coalescedCreate, registerResource, type CreateContext } from './coalesced-create.js';
import { resolveOptions, type OpenAIFlightOptions } from './options.js';
import { clientDigest, hasCallTimeCredentials, type ClientIdentity } from './request-key.js';

const startsWith = (path: readonly string[], prefix: readonly string[]) => prefix.every((part, i) => path[i] === part);

export function withFlights<Client extends object>(client: Client, options: OpenAIFlightOptions): Client {
  const resolved = resolveOptions(options);
  const specs = APIS.filter((spec) => resolved.apis.has(spec.api));
  for (const spec of specs) {
    const resource = spec.path.reduce<any>((at, part) => at?.[part], client);
    if (typeof resource?.create !== 'function')
      throw new FlightConfigurationError(
        `withFlights: client has no ${spec.path.join('.')}.create: pass the OpenAI client (openai 6.x or 7.x)`,
        {
          context: { option: 'client' },
        },
      );
  }
  if (hasCallTimeCredentials(client as ClientIdentity) && resolved.scope === '')
    throw new FlightConfigurationError(
      "withFlights: the client's credentials come at call time (an apiKey function, workloadIdentity or a provider), so nothing in it tells two accounts apart: pass scope naming the account (calls share only within one scope)",
      { context: { option: 'scope' } },
    );
  const digest = clientDigest(client as ClientIdentity);
  const proxies = new WeakMap<object, object>();

  /** A resource whose `create` coalesces. */
  function resourceProxy(resource: object, spec: ApiSpec): object {
    const context: CreateContext = { spec, options: resolved, client: digest, resource, original: (resource as { create: never }).create };
    const create = coalescedCreate(context);
    const proxy = new Proxy(resource, {
      get: (target, property) => (property === 'create' ? create : bound(target, Reflect.get(target, property, target))),
    });
    registerResource(proxy, context);
    return proxy;
  }

  /** `target` at `path`: its properties on the way to a coalesced resource are wrapped, all others are its own. */
  function proxyAt(target: object, path: readonly string[]): object {
    const cached = proxies.get(target);
    if (cached) return cached;
    const proxy = new Proxy(target, {
      get(inner, property) {
        const value: unknown = Reflect.get(inner, property, inner);
        if (typeof property !== 'string' || typeof value !== 'object' || value === null) return bound(inner, value);
        const next = [...path, property];
        const spec = specs.find((s) => s.path.length === next.length && startsWith(s.path, next));
        if (spec) return (proxies.get(value) ?? proxies.set(value, resourceProxy(value, spec)).get(value))!;
        return specs.some((s) => startsWith(s.path, next)) ? proxyAt(value, next) : value;
      },
    });
    proxies.set(target, proxy);
    return proxy;
  }

  return proxyAt(client, []) as Client;
}

/** Methods run on the real object (the SDK keeps private fields a proxy does not have). */
function bound(target: object, value: unknown): unknown {
  return typeof value === 'function' ? value.bind(target) : value;
}
