declare module 'fastify4' {
  import fastify from 'fastify';
  export default fastify;
}
