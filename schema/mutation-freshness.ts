import SchemaBuilder, { BasePlugin, type PothosOutputFieldConfig, type SchemaTypes } from '@pothos/core';
import { clearAllDataLoaders } from '@pothos/plugin-dataloader';
import type { GraphQLFieldResolver } from 'graphql';

/**
 * Each root mutation field answers with what its own write left: the request's loaders (cached per
 * context, resolvers/loaders.ts) are cleared before it runs. Root mutation fields run one after the
 * other, so without this a second mutation of one request (`a: correctMessagePart(…) b:
 * correctMessagePart(…)`) would read the objects the first one's answer cached, as they were before
 * the second write.
 */
export class MutationFreshnessPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override wrapResolve(
    resolver: GraphQLFieldResolver<unknown, Types['Context'], object>,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> {
    if (fieldConfig.kind !== 'Mutation') return resolver;
    return (parent, args, context, info) => {
      clearAllDataLoaders(context as object);
      return resolver(parent, args, context, info);
    };
  }
}

const pluginName = 'mutationFreshness';
SchemaBuilder.registerPlugin(pluginName, MutationFreshnessPlugin);

declare global {
  export namespace PothosSchemaTypes {
    interface Plugins<Types extends SchemaTypes> {
      mutationFreshness: MutationFreshnessPlugin<Types>;
    }
  }
}

export default pluginName;
