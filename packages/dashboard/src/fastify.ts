/**
 * `@flight/dashboard/fastify`: the dashboard as a Fastify 4/5 plugin. Register it with a prefix:
 * `app.register(fastifyFlightDashboard, { prefix: '/flight', singleFlight })`. It stays encapsulated
 * (no `fastify-plugin`): its routes live under the prefix only, and it closes with the instance.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createFlightDashboard } from './dashboard.js';
import type { DashboardRoute } from './handler.js';
import type { FlightDashboardOptions } from './options.js';

/** Fastify's own register options, which reach the plugin with the dashboard's. */
const REGISTER_OPTIONS = ['prefix', 'logLevel', 'logSerializers'];

export type FastifyFlightDashboardOptions = FlightDashboardOptions & { prefix?: string };

export async function fastifyFlightDashboard(app: FastifyInstance, options: FastifyFlightDashboardOptions): Promise<void> {
  const dashboardOptions = Object.fromEntries(Object.entries(options).filter(([name]) => !REGISTER_OPTIONS.includes(name)));
  const dashboard = createFlightDashboard(dashboardOptions as unknown as FlightDashboardOptions);
  app.addHook('onClose', async () => dashboard.close());
  const route =
    (name: DashboardRoute | ((request: FastifyRequest) => DashboardRoute)) =>
    async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
      reply.hijack();
      await dashboard.serve(typeof name === 'function' ? name(request) : name, request.raw, reply.raw, request.body ?? undefined);
    };
  app.get('/', route('page'));
  app.get(
    '/state',
    route((request) => ((request.query as { scope?: string }).scope === 'node' ? 'node' : 'state')),
  );
  app.get('/events', route('events'));
  app.post('/forget', route('forget'));
}
