import SchemaBuilder, { BasePlugin, type PothosOutputFieldConfig, type SchemaTypes } from '@pothos/core';
import { defaultFieldResolver, type GraphQLFieldResolver } from 'graphql';

/**
 * The field extension that marks a field of a connection (`edges`, an edge's `node`, `pageInfo`)
 * as a read of its page: schema/connection.ts and the builder's relay options set it.
 */
export const PAGE_READ = { pageRead: true } as const;

/**
 * The fields of a connection that only walk the page its field resolved (`edges`, an edge's `node`,
 * `pageInfo`, marked with PAGE_READ) resolve as GraphQL's default resolver does, by reading the
 * property of their name, instead of through the relay plugin's `parent => parent.node` and, for
 * `node`, the dataloader plugin's wrapper that would load a node given as an ID. With no resolver
 * left, graphql-jit reads them inline rather than calling a resolver, with its resolve info, per edge.
 *
 * Sound because every page is built by resolvers/pagination.ts `toPage` from the rows a resolver
 * read (`T extends object`): its nodes are those rows, never IDs to load. This plugin comes first in
 * the builder's list, so it sees each field's resolver after the other plugins wrapped it.
 */
export class PageReadsPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override wrapResolve(
    resolver: GraphQLFieldResolver<unknown, Types['Context'], object>,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> {
    return fieldConfig.extensions?.pageRead === true ? defaultFieldResolver : resolver;
  }
}

const pluginName = 'pageReads';
SchemaBuilder.registerPlugin(pluginName, PageReadsPlugin);

declare global {
  export namespace PothosSchemaTypes {
    interface Plugins<Types extends SchemaTypes> {
      pageReads: PageReadsPlugin<Types>;
    }
  }
}

export default pluginName;
