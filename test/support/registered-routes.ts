import { type INestApplication, RequestMethod } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';

/** One route Nest registered: its method (GET, POST …), its path pattern (`/admin/v1/keys/:id`) and where it is handled. */
export interface RegisteredRoute {
  method: string;
  pattern: string;
  handler: object;
  controller: object;
}

/**
 * Every route of every controller of the application, from Nest's own metadata ('path' and 'method' are its
 * metadata keys): what suites compare with the OpenAPI document, the guard's tables and the console's roles.
 */
export function registeredRoutes(app: INestApplication): RegisteredRoute[] {
  const routes: RegisteredRoute[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: unknown[]) => unknown) | null;
      if (!controller) continue;
      const prefixes = [Reflect.getMetadata('path', controller)].flat() as string[];
      for (const name of Object.getOwnPropertyNames(controller.prototype)) {
        const handler = controller.prototype[name];
        if (typeof handler !== 'function' || Reflect.getMetadata('method', handler) === undefined) continue;
        const method = RequestMethod[Reflect.getMetadata('method', handler) as number];
        for (const prefix of prefixes) {
          for (const sub of [Reflect.getMetadata('path', handler)].flat() as string[]) {
            const pattern = `/${[prefix, sub].map((part) => part.replace(/^\/+|\/+$/g, '')).filter(Boolean).join('/')}`;
            routes.push({ method, pattern, handler, controller });
          }
        }
      }
    }
  }
  return routes;
}

/** `/admin/v1/keys/:id` as OpenAPI writes it: `/admin/v1/keys/{id}`. */
export function openApiPath(pattern: string): string {
  return pattern.replace(/:(\w+)/g, '{$1}');
}
